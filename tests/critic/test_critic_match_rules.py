"""The critic's number-matching rules added for answers in other wording (critic/match.py, facts.py, numbers.py),
each on a real H200 capture, each with a twin (a fabricated or mis-attributed number in the same form) that must be
rejected. Values are read from the captures at test time."""
from __future__ import annotations

from critic_case import answer

DUR = "gpu__time_duration.sum"
ST = ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")


def numbers_ok(v, written):
    hits = [n for n in v.numbers if n.written.replace(" ", "") == written.replace(" ", "")]
    assert hits, [n.written for n in v.numbers]
    return all(n.fact or n.derivation for n in hits)


# ----------------------------------------------------------------------------- lane stride of stores
def transpose(c, stride_sentence):
    m = c.metrics("naive_transpose")
    return answer(
        "`naive_transpose` is memory-bound on uncoalesced global stores.",
        [f"{m[ST[0]] / m[ST[1]]:.1f} sectors per store request (`{ST[0]}` / `{ST[1]}`, ncu.ncu-rep)",
         f"kernel duration {m[DUR] / 1e6:.2f} ms (`{DUR}`, ncu.ncu-rep)"],
        f"{stride_sentence} Every warp store is split into separate sector writes and most of each sector is wasted; "
        f"the kernel runs {c.dg.roofline.stated_gap:.1f}x its memory roofline floor.",
        "Transpose through a padded shared-memory tile. Expect store sectors per request to go down to 4.")


def test_a_store_stride_is_checked_against_the_sectors_per_store_request(case):
    """Lanes writing 32 KB apart touch 32 sectors per request: the stores of this kernel measure that; its loads
    (4 sectors per request) would not, nor would lanes 8 bytes apart (8 sectors)."""
    c = case("ho_strided_store")
    m = c.metrics("naive_transpose")
    assert round(m[ST[0]] / m[ST[1]]) == 32 and round(m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                                                       / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]) == 4
    ok = c.critique(transpose(c, "Consecutive threads of a warp write addresses one row (32 KB) apart."))
    assert ok.verdict == "accept", ok.reasons
    assert any(n.derivation and "stores" in n.derivation for n in ok.numbers), ok.numbers
    loads = c.critique(transpose(c, "Consecutive threads of a warp read addresses one row (32 KB) apart."))
    assert loads.verdict == "reject" and any("32 KB" in r for r in loads.reasons), loads.reasons
    near = c.critique(transpose(c, "Consecutive threads of a warp write addresses 8 bytes apart."))
    assert near.verdict == "reject", near.reasons
