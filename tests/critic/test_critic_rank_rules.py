"""Multi-rank claims checked against the ranks compared (signatures.sig_straggler/sig_throttle/sig_comms, checks'
bound), on the real two-rank H200 captures, each with a twin that must be rejected: a straggler needs one rank
entering the collectives late by more than noise, throttling needs its clock to be lower and to explain its
longer compute, waiting in collectives needs all ranks to arrive together; a rank waiting inside NCCL for a late
peer is not busy, so a host-bound straggler stands when the late rank's GPU computes little of its step."""
from __future__ import annotations

from critic_case import answer, case  # noqa: F401 (the fixture)


def _ranks(c, bottleneck: str, mechanism: str, fix: str) -> str:
    late = max(c.dg.ranks, key=lambda r: r.collective_enter_lag_ns)
    return answer(
        bottleneck.format(rank=late.rank),
        [f"rank {late.rank} enters the all-reduce a median {late.collective_enter_lag_ns / 1e6:.2f} ms after the "
         f"first rank (nsys.sqlite)",
         f"median step {late.step_p50_ns / 1e6:.2f} ms on rank {late.rank}; it computes "
         f"{late.compute_ns_per_step / 1e6:.2f} ms of it (nsys.sqlite)"],
        mechanism, fix)


STRAGGLER = ("The all-reduce is a barrier: every other rank waits inside the collective until the late rank arrives, "
             "so each step costs the late rank's time plus the transfer, and that wait is idle time on the others.")
FIX = "Remove the late rank's delay; the step time should decrease toward the other ranks' compute time."


def test_throttling_needs_a_late_rank_with_a_lower_clock_that_explains_it(case):
    balanced = case("mr_balanced")
    v = balanced.critique(_ranks(balanced, "Rank {rank} is thermally throttled: its lower SM clock makes it the "
                                           "straggler.", STRAGGLER, FIX))
    assert v.mechanism == "thermal_throttle" and not v.checks["signature"], v.reasons
    assert any("no straggler" in r for r in v.reasons), v.reasons
    uneven = case("mr_uneven")  # rank 1 clocks lower, but does twice the work: the work explains it, not the clock
    v = uneven.critique(_ranks(uneven, "Rank {rank} is thermally throttled: its lower SM clock makes it the "
                                       "straggler.", STRAGGLER, FIX))
    assert not v.checks["signature"] and any("does not explain" in r for r in v.reasons), v.reasons
    ok = uneven.critique(_ranks(uneven, "Rank {rank} is the straggler: it does more work per step than the others.",
                                STRAGGLER, FIX))
    assert ok.mechanism == "rank_imbalance" and ok.checks["signature"], ok.reasons


def test_waiting_in_collectives_needs_the_ranks_to_arrive_together(case):
    c = case("mr_host_slow")
    comms = c.critique(_ranks(c, "The job is bound by the all-reduce: every rank spends its step inside NCCL.",
                              STRAGGLER, FIX))
    assert comms.mechanism == "comms_wait" and not comms.checks["signature"], comms.reasons
    straggler = c.critique(_ranks(c, "Rank {rank} is the straggler.", STRAGGLER, FIX))
    assert straggler.checks["signature"], straggler.reasons


def test_a_rank_waiting_in_nccl_for_a_late_peer_is_not_busy(case):
    slow_host = case("mr_host_slow")  # rank 1's host is late: its GPU computes about half of its step
    host = "Host-bound: rank {rank} is the straggler because its host works before each step's launches."
    ok = slow_host.critique(_ranks(slow_host, host, STRAGGLER, FIX))
    assert ok.checks["bound"], ok.reasons
    uneven = case("mr_uneven")  # rank 1 is late because its GPU does twice the work: not the host
    bad = uneven.critique(_ranks(uneven, host, STRAGGLER, FIX))
    assert not bad.checks["bound"] and any("GPU work, not its host" in r for r in bad.reasons), bad.reasons
