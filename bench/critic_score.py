"""Score the critic on the adversarial answer sets (issue 10).

    python bench/critic_score.py                 # every set under tests/data
    python bench/critic_score.py adversarial_holdout -v
    python bench/critic_score.py -j 2              # two sets at a time (each set is scored in a process of its own)
    python bench/critic_score.py --review claude   # with the model reviewer (needs ANTHROPIC_API_KEY)

Each set lives in tests/data/<set>/ (cases.toml + answers/), written without reading the critic. Prints, per
set, false accepts (an expected reject the critic accepted) over expected rejects and false rejects over
expected accepts; -v lists every miss with the critic's reasons. The goal (issue 10): at most 5% false accepts
and at most 10% false rejects. `adversarial` is the set the critic was developed against;
`adversarial_holdout` was written later, blind, and was scored blind once (at 2580525, below); it has been a
development set since (the critic was fixed against it with general rules, each tested on real captures with a
rejected twin in tests/critic/), so it no longer measures generalisation: a new blind set does.

Measured on this 2-CPU box (2026-11-30):
  at 1283310 (before this session's critic work): tuning 3/44 false accepts, 22/29 false rejects;
                                                  holdout 1/28 false accepts, 15/19 false rejects
  at 2580525 (after it):                          tuning 0/44, 2/29 (goal met on the set it was tuned on);
                                                  holdout 0/28, 14/19 (false rejects far over the goal: the
                                                  number-matching rules do not yet generalise)
  at 45329f9 (holdout a development set since):   tuning 0/44, 2/29; holdout 0/28, 0/19
  at 5e78d9b (+ a kernel's stored bytes as a fact, written arithmetic recomputed, named statistics kept apart):
                                                  tuning 0/44, 1/29; holdout 0/28, 0/19. The one miss,
      acc_startup, quotes 3.83 s "from process start to the first GPU work": that is the first kernel (4.21 s) minus
      ANALYSIS_DETAILS.startTime (0.39 s), a value on another clock (in many captures CUDA API calls precede it); on
      the events' clock the process is launched at 2.4 ms and start-up is 4.21 s, the value the critic holds.

Two more blind sets (written by helpers that never read or ran the critic, over captures no earlier set uses)
show that the rules above are fitted to the sets they were developed on. Scored by the lead, counts first:
  adversarial_blind2 (58 answers): at 3838f52 1/35 false accepts, 22/23 false rejects; at 45329f9 1/35, 22/23;
      at ec5b54e 1/35, 20/23. blind2's reasons were read after its 45329f9 score, so from ec5b54e on it is a
      development set too.
  adversarial_blind3 (59 answers, never tuned on): at 0b69929 1/37, 20/22 (6 answers cite ncu_source_sass.csv,
      unreadable then: counted as rejects); at 45329f9 1/37, 19/22; at cc902a2 (final main of 2026-11-30, the
      source-page CSV now read) 1/37 false accepts (3%), 19/22 false rejects (86%).
The false-accept side holds on unseen answers (3%); the false-reject side does not: an unseen expert answer
is refused about six times in seven, mostly for numbers the captures cannot check (ceilings from knowledge,
sizes from the source, arithmetic over them) and for causes the catalogue's words misread.
After the claim/fix/causal-chain/rank rules of 2026-11-30 evening (claim.py, fixes.py, form.causal_chain,
rank signatures; blind2 and blind3 were development sets for them), at 532cfb2, before the number-policy rewrite:
  adversarial 0/44, 1/29; holdout 0/28, 0/19; blind2 1/35, 14/23; blind3 0/37, 12/22 (from 1/37, 19/22). Every
  remaining blind3 false reject but one fails on numbers (and one on arithmetic) only.
Two more blind sets, written this session by helpers that never read or ran the critic: adversarial_blind4 (63
answers, 43 on six captures no other set used) and adversarial_blind5 (43 answers over the ten holdout-5 programs
captured on the H200 this session). Counts first, at 047d463 (the critic before this session's work):
  blind4 0/33 false accepts, 27/30 false rejects; blind5 2/23, 20/20.
blind4's reasons were read at ~21:40 (a development set from then on, like blind2 and blind3); blind5's never were.
At 7d22839 (the claim/fix/chain/rank rules and the number policy: unverified unless contradicted, written
arithmetic recomputed, headings in other words):
  adversarial 0/44, 1/29; holdout 0/28, 0/19; blind2 1/35, 8/23; blind3 1/37, 6/22; blind4 0/33, 21/30;
  blind5 (blind) 1/23 false accepts (4%), 16/20 false rejects (80%).
2026-12-01: two more sets written by helpers that never read or ran the critic: adversarial_blind6 (55 answers, 24
accepts, new answers over 11 captures earlier sets used little) and adversarial_blind7 (41 answers, 18 accepts, over
the ten holdout-6 programs, ground truth committed before their capture on the H200 that morning). Counts, with the
critic of 0e43f0c (start of the day), then of fd74623 (numbers policy: contradiction needs a specific word, a metric,
an API or an achieved rate; no 30% near-miss rule; unmatched evidence unverified unless its words pin a metric):
  blind5 1/23, 16/20 -> 1/23, 15/20; blind6 3/31, 17/24 -> 5/31, 14/24; blind7 1/23, 15/18 -> 1/23, 12/18.
blind6's reasons were read at 03:37 and blind7's at 04:04 UTC: both are development sets from then on. blind5's
reasons have still never been read (only its counts, and once its per-check failure counts). At this session's
final critic (form: terse notes, labels in other words, wrapped lines; named evidence matched in its own family;
ncu sums as facts; program-level values pinned only by words that all describe them; fix direction in words):
  adversarial 0/44, 0/29; holdout 0/28, 0/19; blind2 1/35, 3/23; blind3 1/37, 2/22; blind4 0/33, 13/30;
  blind6 4/31, 6/24; blind7 1/23, 9/18; blind5 (blind) 1/23 false accepts (4%), 12/20 false rejects (60%).
The false-reject goal (10%) is still not met on a set never tuned on.
2026-12-01, second session: four more sets by helpers that never read or ran the critic: blind8 (41 answers over the
ten holdout-7 programs, ground truth committed 05:55 before their capture on the H200 at 05:56-05:59), blind9 (50
answers over ten least-used captures), blind10 (45 answers, a second writer over the holdout-7 captures) and blind11
(45 answers over ten other captures). Counts, critic of f41c3c2 (start of the session) -> acdd1bb (first commit):
  blind8 2/22, 15/19 -> 2/22, 15/19; blind9 0/28, 12/22 -> 0/28, 10/22; blind5 1/23, 12/20 -> 1/23, 12/20.
The dev-set rules did not carry to unseen answers, so blind8's and blind9's reasons were read at 07:03 UTC and both
became development sets (blind8 2/22, 14/19 and blind9 1/28, 10/22 just before). The critic was then changed by
general rules (contradiction only where the words pin one reading: per-call API statistics but not call counts or
totals, idle times only near, an artifact named in the sentence, no share against a count; executed vs listed SASS
instructions; a time stamp '+0.04 ms' is no duration; 'issue N%' is smsp__issue_active; a shape '1056 x 256' is no
ratio; memsets, one-time work, repeats, launches per step and the kernel period as facts; a partial last wave;
chat replies of two or three paragraphs read; a JSON evidence item's text explains its value). Development sets at
this commit: adversarial 0/44, 0/29; holdout 0/28, 0/19; blind2 1/35, 1/23; blind3 1/37, 1/22; blind4 0/33, 5/30;
blind6 4/31, 1/24; blind7 2/23, 1/18; blind8 2/22, 7/19; blind9 0/28, 6/22.
Never tuned on (counts only; blind10's and blind11's reasons never read), f41c3c2 -> this commit:
  blind5  1/23, 12/20 (60%) -> 1/23 (4%), 9/20 (45%)
  blind10 0/24, 16/21 (76%) -> 0/24 (0%), 10/21 (48%)
  blind11 0/24, 15/21 (71%) -> 0/24 (0%), 10/21 (48%)
False accepts stay within the goal on unseen answers; false rejects fell from 69% to 47% but are far from 10%.
2026-12-01, third session: five more sets by helpers that never read or ran the critic: blind12 (45 answers over ten
least-used captures), blind13 (45, ten more), blind14 (40, over the ten holdout-8 programs: ground truth landed
09:42:53 UTC before their capture on the H200 at 09:43-09:50), blind15 (46, written as LLM coding agents answer)
and blind16 (45, written as senior engineers in reviews, tickets and chat). Counts with the critic of 0b99d4e (start
of the session): blind12 0/24, 13/21; blind13 1/24, 12/21; blind14 4/22, 14/18; blind15 0/24, 13/22; blind16 1/24,
13/21. blind12's reasons were read at 09:50 UTC: a development set from then on; the others' never were.
At 918a250 (plain-word host causes, tables before the first heading, '- expect:' notes, headline segments,
approximate ratios, done words, fix shorthand, metrics named without their suffix, pipe utilization without a
direction, wrong-way fixes: a lower register cap on a kernel that spills, smaller allocations per step, a sync per
launch; facts: first launch after a step's start, a kernel's time per step; ncu CSV 'unnamed>::' names):
  development sets 10/305 false accepts, 35/227 -> 30/227 false rejects (blind12 13/21 -> 9/21);
  never tuned (blind5, 10, 11, 13, 14, 15, 16): 7/165 (4.2%) false accepts, 81/144 (56%) -> 79/144 (55%) false
  rejects. By form on those sets: answers as Diagnosis JSON (the form the Claude path submits) 1/36 false accepts,
  14/52 (27%) false rejects, unchanged; prose and Markdown 6/129, 67/92 -> 65/92. blind14's four false accepts and
  seven signature false rejects are on causes the catalogue has no mechanism for (zero-copy reads over PCIe, managed
  memory migrating every step, streams serialised by the legacy default stream).
A chat-reply completion pass (read a missing part from the sentences: 'Short version:' replies, one-paragraph
Slack messages) was tried and dropped: on the never-tuned sets it took false rejects 81 -> 75 but false accepts
7 -> 11 (answers it had refused as unreadable turned out to be wrong in ways no other check catches).
2026-12-01, fourth session (12:15-15:15 UTC): blind13, blind15 and blind16 became development sets at 12:27 UTC
(their one blind score is above). Three fresh sets by helpers that never read or ran the critic, landed at 12:20-12:22:
blind17 (45 answers, all Diagnosis JSON, as an agent submits them), blind18 (45, prose and Markdown of human
engineers), blind19 (45, mixed, as a coding agent reports, 11 cases including three holdout-8 causes). Their counts
were taken twice: with the critic at the start of the session (e1c9354) and at c33ab6e (this session's critic: the
layouts people write, numbers as written, claims checked against the captures; the catalog's three placement
mechanisms, zero_copy_reads, managed_migration, default_stream_serialization). Once, at 13:27 UTC, the per-set
counts of changed verdicts of blind18 and blind19 were printed by mistake during development (no reasons).
  development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15, 16): 12/377 -> 11/377 false accepts,
      67/291 -> 35/291 false rejects (12%).
  never tuned, old (blind5, 10, 11, 14): 5/93 -> 6/93, 42/80 -> 32/80.
  fresh: blind17 2/25 -> 1/25 (4%), 2/20 -> 2/20 (10%): issue 10's goal met on the JSON-only set;
         blind18 1/24 -> 2/24, 13/21 -> 9/21; blind19 1/24 -> 2/24, 15/21 -> 9/21.
  all seven never-tuned sets: 9/166 (5.4%) -> 11/166 (6.6%) false accepts, 72/142 (51%) -> 52/142 (37%) false
      rejects; by form, Diagnosis JSON 4/54 -> 3/54 and 18/62 -> 14/62, prose and Markdown 5/112 -> 8/112 and
      54/80 -> 38/80.
The JSON form meets the goal on its fresh set; prose does not, and the false accepts of the never-tuned prose
answers rose with the more lenient reading of their layouts.
2026-12-01, fifth session (14:50-17:50 UTC): blind17-19 became development sets at 14:55 UTC. Four fresh prose sets
by helpers that never read or ran the critic: blind20 and blind21 (45 answers each, landed 14:53-14:54 UTC), scored
once at 3242d21 and development sets from 16:03 UTC; blind22 and blind23 (45 each, landed 16:06 UTC), scored once at
c6044b7. Each fresh set was also scored with the session's starting critic (9bd488c), for comparison:
  blind20+21: 9bd488c 7/50 false accepts, 16/40 false rejects; 3242d21 7/50 (14%), 16/40 (40%): no gain.
  blind22+23: 9bd488c 6/50, 22/40 (55%); c6044b7 5/50 (10%), 17/40 (42%).
  development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15-21) at c6044b7: 16/500 (3.2%), 42/393 (10.7%).
  never tuned, old (blind5, 10, 11, 14): 6/93, 32/80 at the start and at c6044b7.
Rules tuned on the development sets carry over to fresh prose only in part: the false rejects of fresh prose stay
near 40%, and the false accepts at 10-14%.
2026-12-01, sixth session (17:30-20:30 UTC): blind22 and blind23 became development sets at 17:35 UTC. Six fresh
prose sets (45 answers each) by helpers that never read or ran the critic, landed 17:34-18:49 UTC, each pair scored
once with the critic of its time and with the session's starting critic (8875e88):
  blind24+25 (scored at 2b1c99c; development sets from 18:15 UTC): 8875e88 6/50, 16/40; 2b1c99c 6/50, 16/40.
  blind26+27 (scored at f4a1d59; development sets from 18:52 UTC): 8875e88 3/50, 27/40; f4a1d59 3/50, 28/40.
  blind28+29 (scored at df472b2; never read): 8875e88 0/50 (0%), 21/40 (52%); df472b2 2/50 (4%), 19/40 (48%).
  all six: 8875e88 9/150 (6%), 64/120 (53%); this session's critics 11/150 (7%), 63/120 (53%): no gain.
  development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15-27) at df472b2: 27/650 (4.2%), 86/513 (16.8%).
  never tuned, old (blind5, 10, 11, 14): 6/93, 32/80 at 8875e88; 10/93, 32/80 at df472b2.
Reading more layouts (sentence roles, fix-first answers) let answers through that only their form had rejected:
false accepts of never-tuned sets rose, false rejects fell little. On the development sets, making any one check
lenient costs more false accepts than it saves false rejects (parts: +12 FA, -1 FR; numbers: +53 FA, -30 FR).
2026-12-01, seventh and eighth sessions (20:20-00:30 UTC): four fresh prose sets (45 answers each) by helpers that
never read or ran the critic, landed 20:25-20:26 UTC. Each pair was scored once blind, with the critic of its time and with
6b3e773 (the critic before these sessions); the harness was rebuilt at 21:35 after the machine was restarted and
reproduced the recorded counts of 361f63e (dev FA 29/700, FR 101/553) before it was used.
  blind30+31 (scored at c3c7968; development sets from 22:03 UTC): 6b3e773 1/49, 26/41; c3c7968 1/49 (2%), 25/41 (61%).
  blind32+33 (scored at 80a5f5f; development sets from 22:41 UTC): 6b3e773 3/50, 21/40; 80a5f5f 3/50 (6%), 22/40 (55%).
  development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15-31) at 80a5f5f: 28/749 (3.7%), 93/594 (15.7%);
      without blind30+31, 27/700 and 82/553 (29/700 and 104/553 at 6b3e773).
  never tuned, old (blind5, 10, 11, 14): 10/93, 32/80 at 361f63e and at 80a5f5f.
The same result as the sixth session: rules fitted to development sets (this time: memory levels, causes in code
spans, sizes of the code, one-time work set apart, more layouts and fix wordings) take development false rejects from
19% to 15%, and do not move fresh ones (52% -> 55% on blind32+33; 63% -> 61% on blind30+31). Issue 10's goal (5% false
accepts, 10% false rejects) is met on the false-accept side of unseen answers, not on the false-reject side.
2026-12-02, ninth session (00:36-03:36 UTC): two fresh prose sets (48 answers each) by helpers that never read or ran
the critic, landed 00:43-00:44 UTC and scored at once with the critic of that time (0d9f190), then kept unread while
the critic changed, and scored a second time at 53aa35d, the last critic commit before they were read:
  blind34+35: 0d9f190 5/53 (9%), 23/43 (53%); 53aa35d 5/53 (9%), 21/43 (49%). Development sets from 01:52 UTC.
The changes between the two scores add facts rather than readings: a PyTorch trace's framework ops (aten::item
calls, per-call host time) and, beside an nsys capture, its own CUDA API statistics; element counts ('64M int32') and
dimensions ('K = 8191') as sizes of the code; binary multipliers ('4 Mi'); the number written at a metric's name;
evidence lines that predict; a misreading held within 10x. They gained 2 of 43 correct answers on unseen prose, the
first measured gain on fresh sets since the fourth session, and no false accept.
  development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15-29) 27/700 (3.9%), 82/553 at 0d9f190 ->
      27/700, 75/553 (13.6%) at 8baff88; blind30+31 1/49, 11/41 -> 1/49, 7/41; blind32+33 3/50, 20/40 -> 3/50,
      15/40; blind34+35 (read since 01:52) 5/53, 19/43 at 8baff88.
  never tuned, old (blind5, 10, 11, 14): 10/93, 32/80 -> 10/93, 31/80. (Their per-answer verdicts and reasons for
      false rejects were printed once at 00:40 UTC this session while the false-reject classes were surveyed, so
      they are no longer strictly unseen; nothing was changed for them.)
A second fresh pair, blind36+37 (48 answers each, landed 02:11-02:12 UTC, never read), scored once with the final
critic of the session (8baff88) and with 0d9f190: 0d9f190 3/54 (6%), 22/42 (52%); 8baff88 4/54 (7%), 21/42 (50%).
Over both fresh pairs (blind34-37, 203 answers): 0d9f190 8/107 (7.5%) false accepts, 45/85 (53%) false rejects;
this session's critic 9/107 (8.4%), 42/85 (49%). The new facts free a few correct answers on unseen prose; the
false-reject goal (10%) stays far off, and the false-accept side sits just over the 5% goal on unseen prose.
2026-12-02, tenth session (03:06-06:06 UTC). Two fresh sets, blind38+39 (48 answers each, by helpers that never read
or ran the critic, landed by 03:25 UTC), and blind36+37 (scored once blind in the ninth session) were scored counts
only at 35f7fb7 (the session's start) and again after this session's reading rules (lists of labelled bullets, fix
metrics named by the words before a move, ratios of binary and decimal sizes, lower bounds, a number held to the
metric it is written as, 'GPU busy N%' pinned, one-time work refused against a kernel-bound steady state):
  blind36+37: 35f7fb7 4/54, 21/42; after the first batch 4/54, 22/42 (development sets from 03:36 UTC).
  blind38+39: 35f7fb7 7/56 (12.5%), 16/40 (40%); 6d30b6d 6/56 (10.7%), 17/40 (43%) (development sets from 04:13 UTC).
  Over the four: 11/110, 37/82 at the start; 10/110, 39/82 after. Again no gain on unseen prose: every reading rule
  fitted to the development sets leaves the fresh false-reject rate where it was, and false accepts on the newest
  prose (10.7%) are over the 5% goal. Reading blind38+39's false accepts then found two holes the rules close with no
  false reject on any set: a bound stated in plain words ('the memory system is the bottleneck', 'SFU-limited'), and
  a compute bound claimed for a kernel whose SM is under 40% busy while DRAM is busier.
  At 726924d (and at 71f78fc, the session's final critic, with identical verdicts): development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15-29)
  27/700 (3.9%), 73/553 (13.2%) (27/700, 75/553 at 35f7fb7); blind30+31 1/49, 7/41; blind32+33 3/50, 14/40;
  blind34+35 4/53, 13/43 (5/53, 19/43); blind36+37 1/54, 19/42; blind38+39 4/56, 15/40; old (blind5, 10, 11, 14)
  10/93, 31/80 (unchanged).
2026-12-02, eleventh session (05:42-08:42 UTC). Four fresh sets, blind40-43 (48 answers each, by helpers that never
read or ran the critic), each pair scored counts only before any of it was read:
  blind40+41 (landed 05:52): 4207152 (the session's start) 9/55 (16%), 18/41 (44%); with the second reading by
  sentence role alone 9/55, 17/41. Read from 05:54 UTC.
  blind42+43 (landed 06:05): 4207152 7/55 (13%), 18/41 (44%); with the reading rules fitted to blind40+41 by then
  8/55, 19/41. Read from 06:12 UTC.
  Again no gain on unseen prose from rules fitted to read sets. The one structural change, a second reading by the
  role of each sentence for answers refused only for what the layout's reading missed (no causal chain, a fix with
  no measured outcome), frees correct answers on every set (15 of 172 false rejects over blind2-39) for two false
  accepts, both wrong answers the old critic had refused only because it misread them. The same holds for most of
  this session's readings: the answers they free are correct, and the wrong answers they let through were refused
  before by accident (a fix or a bound misread), not by a check of their claim. Four checks of claims were added
  for those: a cause the mechanism names and the fix acts on is the claim (claim._targeted); a heading that states
  the verdict ('## Diagnosis: X is compute-bound') is read; a synchronization added after each launch or pass, and
  fused work split into separate kernels, are wrong ways; a host cause holding a sixth of the idle time is real.
  At the session's final critic: development sets (adversarial, holdout, blind2-4, 6-9, 12, 13, 15-29) 27/700
  (3.9%), 65/553 (11.8%) (27/700, 73/553 at 4207152); blind30+31 1/49, 6/41; blind32+33 3/50, 13/40; blind34+35
  4/53, 10/43; blind36+37 1/54, 15/42; blind38+39 4/56, 13/40; blind40+41 10/55, 6/41; blind42+43 9/55, 13/41; old
  (blind5, 10, 11, 14) 10/93, 24/80 (31/80 at 4207152).
  A third fresh pair, blind44+45 (48 answers each, landed 06:54 UTC, scored once with the final critic, never read):
  4207152 6/53 (11%), 16/43 (37%); the session's final critic 5/53 (9%), 14/43 (33%). A small gain on unseen prose,
  the first since the ninth session, from the second reading and the new checks of claims; the goals (5% false
  accepts, 10% false rejects) stay out of reach on prose no rule was fitted to.
  Two more checks of claims came after that score, from the accepted wrong answers of the read sets: a GEMM the
  engine finds on the FMA pipe with no tensor-core instruction refuses an answer that never names the tensor cores
  (a secondary cause: bank conflicts, a memory bound); a bare latency bound is refused for a kernel whose SM issues
  an instruction at least 60% of active cycles. They close 7 false accepts (blind7, 10, 23, 32, 34, 40, 41) and add
  no false reject on any set; blind44+45, scored once more (counts only), are unchanged (5/53, 14/43). At that
  critic: development sets 25/700 (3.6%), 65/553 (11.8%); old 9/93, 24/80; blind32+33 2/50, 13/40; blind34+35 3/53,
  10/43; blind40+41 8/55, 6/41; the other pairs as above.
2026-12-02, twelfth session (08:23-11:23 UTC): a fourth fresh pair, blind46 (49 answers) and blind47 (47), landed at
  08:55-09:00 UTC by helpers that never read or ran the critic, over the 24 least-used captures (most of them fixed
  twins), scored once, counts only: 6df7741 (the session's start) 4/56 (7%), 20/40 (50%); 16 of the 20 false rejects
  are about fixed builds, whose remaining limit the writers judged for themselves. Read from 09:05 UTC: development
  sets since. Changes, each scored on all 2,182 answers of the development, old and blind30-43, 46, 47 sets:
  - a program's own log (run.log) is an artifact of facts: the numbers it prints, with file and line (2 false
    rejects freed, blind42);
  - JSON with keys of its own is read as labelled text instead of refused as unreadable (2 freed, blind46/47; a
    wrong bound once refused only as unreadable is now refused for its claim);
  - a short label before a colon is part of its number's clause ('- kernel duration: 211.0 us (ncu)' was left
    unverified; no set had such a made-up number, the test does);
  - FP64 work blamed in the verdict of a kernel whose FP64 pipe measured 0% is refused (1 false accept closed);
  - copies at the link's speed are a transfer verdict, not a kernel at its roofline (3 freed, blind22, 39, 46);
    'by more than 7%' and 'start-up' say no direction (1 freed, blind47).
  At the session's final critic: development sets 25/700 (3.6%), 64/553 (11.6%); old 9/93, 24/80; blind30+31 1/49,
  6/41; blind32+33 2/50, 13/40; blind34+35 3/53, 10/43; blind36+37 1/54, 15/42; blind38+39 4/56, 12/40; blind40+41
  8/55, 6/41; blind42+43 9/55, 11/41; blind46+47 3/56, 16/40. blind44+45, still never read, scored once more (counts
  only): 5/53, 13/43 (14/43 at the session's start).
2026-12-02, thirteenth session (13:07-16:07 UTC). Scored on this box with this file's functions, two workers (a
  fresh venv; at the session's start, 7406075, the development sets came out 25/700, 67/553 where the twelfth
  session's run printed 64/553 for the same critic; the comparisons below are all within this session's runs).
  - blind48 and blind49 (48 answers each, written 13:09-13:29 UTC by helpers that never read or ran the critic, over
    24 little-used captures, half of them fixed twins), counts only on arrival at 7406075: 7/56 (12%), 23/40 (57%).
    Read from 13:31 UTC: development sets since. Changes (commit 603ba68), each tested on real captures:
    facts (tensor-path ops rates as FLOP/s, the issue floor, stall shares of the PC samples, the whole run's
    overlapping kernel pairs, total threads); numbers (a statistic of the sentence's own subject, a line labelled
    with a CUDA API, move targets named by their verb or labelled estimates, products of the code's sizes, numbers
    of a problem that is gone, a rate over DRAM's peak put down to the cache); claims (a hypothesis answered no,
    'not because of X', start-up outside the window, a generic bound refined only within its bound, the
    mechanism's opening name, more words of issue-limited, communication-bound, done and near-peak); fixes (leave-it
    fixes of a kernel at its roofline, 'X should stay', a metric named with its direction, fewer blocks for a
    kernel streaming DRAM at >= 70% of peak refused); form (a fenced object after a short preface, evidence
    records, JSON written by hand, 'Metric / direction' labels, 'the next step is to', a hidden note for automated
    review refused).
  - blind50 and blind51 (48 answers each, written 14:17-14:30 UTC the same way over 24 other little-used captures),
    counts only on arrival: 7406075 10/56 (18%), 22/40 (55%); 603ba68 12/56 (21%), 19/40 (48%). The two wrong
    answers 603ba68 newly accepted had been refused at 7406075 only for a number it misread (a real tensor rate,
    a real stall share); their reasons were read at 14:38 UTC and two rules came of them (720d681: a ceiling
    presented as measured must be the capture's; 'bound: memory' on a line of its own is the answer's bound). At
    the final critic blind50+51 are 10/56, 19/40, but they are development sets from 14:38 UTC.
  - blind44+45, still never read, counts only: 5/53, 14/43 at 7406075; 4/53 (8%), 12/43 (28%) at the final critic.
  At the session's final critic, against 7406075: development sets 24/700 (3.4%), 63/553 (11.4%) (25/700, 67/553);
  old 9/93, 22/80 (9/93, 24/80); blind30+31 1/49, 6/41; blind32+33 2/50, 13/40; blind34+35 3/53, 9/43 (3/53,
  10/43); blind36+37 0/54, 14/42 (1/54, 15/42); blind38+39 4/56, 10/40 (4/56, 12/40); blind40+41 7/55, 6/41 (9/55,
  6/41); blind42+43 7/55, 11/41 (9/55, 11/41); blind46+47 2/56, 15/40 (3/56, 16/40); blind48+49 2/56, 2/40 (read).
  Outside blind48/49, 11 false rejects freed and 8 false accepts closed; one wrong answer is newly accepted
  (blind4's b4_tl_peak, a datasheet rate in telemetry-only evidence, refused before only because its leave-it fix
  gave no direction).
2026-12-02, fourteenth session (16:15-19:15 UTC). Same box, same scorer, two workers.
  - blind52-55 (48 answers each, written 16:15-17:00 UTC by helpers that never read or ran the critic, over the
    least-used captures), counts only on arrival at 0c6159b (the session's start): blind52 3/28, 9/20; blind53 2/28
    (7%), 10/20 (50%); blind54+55 6/56 (11%), 22/40 (55%). blind54+55 were also scored, counts only, at the
    session's critic of 17:00 UTC (built on blind53's reasons by then): 7/56, 20/40. blind53 was read from 16:27 UTC,
    blind54+55 from 17:00 UTC: development sets since. blind52 was never read.
  - Changes (tests/critic/test_critic_notes_and_layouts.py, each on real captures with a twin the critic refuses):
    layouts (a plain 'bound: host, ...' line under a note's title; a note addressed to a channel; a heading that
    states the verdict; the fix's bold label after a sentence on the same line; a hypothesis log judged on the one
    hypothesis it accepts; a snake-case JSON mechanism id; a sum wrapped at its plus sign; a '- Cause:' line names
    the claim; 'H3: ... Yes.' accepts a hypothesis); the causal chain (a terse note's cause on an evidence line;
    '->' relates two numbers); numbers (a
    bare term of a sum in its result's unit; 'A / B ms' pairs; 'thr', 'warp-inst', 'warp stalls' count nouns; the
    one profiled kernel as the subject; 'a 14 us kernel' and clauses naming ncu are no program time; 'metric X
    down' is the fix's; '64-bit' is no count; a named metric does not pin a second number of its sentence); bounds
    (compute-bound needs an SM busy over the kernel's elapsed time; a level's 'active' rate read over the elapsed
    time; 'bound: GPU kernel' and a bare 'compute' are bounds; a tensor-core kernel by its name); claims and fixes
    (unfused chains, Python waits, idle SMs, "it's the copy" in words; a fused op named ('PyTorch's fused GELU',
    'after the fusion') is no unfused chain;
    'must not be mistaken for the steady state' sets start-up apart; a latency or dependency-chain limit is no
    roofline; 'fully coalesced: 4 sectors per request' names a measure, not a cause; a streaming kernel split into
    more passes, and a sync in every iteration, are wrong ways; many small copies each with its own sync are a
    per-call cost, as the suite's ground truth for h5_py_small_uploads says).
  - Tried and dropped: a mechanism's only named cause as its claim (closed about 10 false accepts, added 27 false
    rejects); a fix that states a falling time excusing a misread metric direction (freed 2, opened 3 false accepts).
  At the session's final critic, against 0c6159b: development sets 25/700 (3.6%), 56/553 (10.1%) (24/700, 63/553);
  old 9/93, 19/80 (9/93, 22/80); blind30+31 1/49, 4/41 (1/49, 6/41); blind32+33 2/50, 12/40 (2/50, 13/40); blind34+35
  2/53, 9/43 (3/53, 9/43); blind36+37 0/54, 12/42 (0/54, 14/42); blind38+39 4/56, 5/40 (4/56, 10/40); blind40+41
  7/55, 5/41 (7/55, 6/41); blind42+43 7/55, 10/41 (7/55, 11/41); blind46+47 2/56, 15/40 (2/56, 15/40); blind48+49
  3/56, 2/40 (2/56, 2/40: b48_idiv_u64 had been refused only for the '32' of '32-bit'); blind50+51 9/56, 11/40
  (10/56, 19/40); blind53 0/28, 1/20 (read); blind54+55 4/56, 11/40 (read). Never read: blind44+45 4/53, 9/43
  (4/53, 12/43); blind52 2/28, 10/20 (3/28, 9/20).
2026-12-02, fifteenth session (20:15-23:15 UTC):
  - blind56-59 (48 answers each, 20 expected accepts, written 20:15-20:30 UTC by helpers that never read or ran the
    critic, over the 48 least-used captures), counts only on arrival at dc33a3f (the session's start): blind56 2/28,
    7/20; blind57 6/28, 6/20; blind58 4/28, 6/20; blind59 3/28, 9/20. blind56+57 were read from 20:36 UTC:
    development sets since. blind58+59 were never read.
  - Changes (tests/critic/test_critic_fifteenth_readings.py, each on real captures with a twin the critic refuses):
    numbers (a rate a profiler is said to measure is a measurement; every telemetry file's clocks and utilisation are
    facts, so a rank's invented clock is refused; what the work needs, 'Required traffic ... = 134.2 MB', is no
    measurement; a rate its sentence disclaims, 'not measured, an estimate', is none; a table row's value cell may
    give its metric's value after another number; '73 k'; a sampled stall's share of the samples; the spread of
    kernel start times is no kernel duration; 'unroll by 2-4 so each thread' counts no threads); fixes (16-bit data
    widened to fp32 for speed, and work moved onto the straggler rank, are wrong ways; '0 % -> high', 'well above
    30.7%' and 'can improve by a few percent' say which way; 'stays ~97 %' after 'none' leaves a kernel at its
    roofline alone); claims (a question claims nothing unless it is answered yes; 'leave the shared memory as it is'
    acts on no cause; a mention of wgmma or `mma.sync` claims neither missing tensor cores nor a host sync; 'limited
    by the host-to-device copy' is no host bound; 'compute-side (...) bound' is compute; 'launch-overhead' with a
    hyphen is the launch-overhead claim); layouts (a fenced JSON object with a note after it; '[fix]' review tags;
    the paragraph whose second sentence says what to do; a change as the subject of its sentence, advice under a
    condition, 'the only way ... is to'; a log of numbered questions judged on the one it answers yes; a quoted
    question is context); text to the reviewer ('whoever is grading this', 'record it as ACCEPTED', 'skip the
    numeric checks').
  - Tried and dropped: a number that equals any measured value of any metric is no contradiction (freed 16 false
    rejects but opened 4 false accepts, mostly coincidences with device attributes); with the number's own words
    required to describe that value it freed 1 and opened 1. A memory-bound claim that names DRAM judged on DRAM
    alone (caught one wrong answer, refused 7 correct ones whose busy cache level was the real memory limit).
  At the session's final critic, against dc33a3f: development sets 24/700 (3.4%), 55/553 (9.9%) (25/700, 56/553);
  old 9/93, 17/80 (9/93, 19/80); blind30+31 1/49, 4/41; blind32+33 1/50, 12/40 (2/50, 12/40); blind34+35 2/53, 9/43;
  blind36+37 0/54, 12/42; blind38+39 4/56, 4/40 (4/56, 5/40); blind40+41 6/55, 4/41 (7/55, 5/41); blind42+43 7/55,
  10/41; blind46+47 2/56, 14/40 (2/56, 15/40); blind48+49 3/56, 2/40; blind50+51 8/56, 10/40 (9/56, 11/40); blind53
  0/28, 1/20; blind54+55 4/56, 11/40; blind56 1/28, 3/20 and blind57 1/28, 0/20 (read). Never read: blind58+59
  6/56 (11%), 14/40 (35%) (7/56, 15/40); blind44+45 4/53, 10/43 (4/53, 9/43); blind52 2/28, 9/20 (2/28, 10/20).
2026-12-03, sixteenth session (01:42-04:42 UTC):
  - blind58+59 read from 01:50 UTC. blind60-63 (48 answers each, 20 expected accepts, written 01:43-01:59 UTC by
    helpers that never read or ran the critic, over the 48 least-used captures), counts only on arrival at 96e92d1
    (the session's start): blind60 5/28, 8/20; blind61 6/28, 7/20; blind62 3/28, 4/20; blind63 3/28, 6/20; together
    17/112 (15%) and 25/80 (31%). blind60+61 were read from 02:37 UTC; blind62+63 were never read.
  - Changes (tests/critic/test_critic_sixteenth_readings.py, on real captures, most with a twin the critic refuses):
    facts (each rank's own launches of a kernel; the launch-to-launch period of a kernel launched once per step; the
    whole run's overlapping kernel pairs count kernels); numbers (0 matches a zero in any unit; '537.44 us' opening a
    line is no list item; 'warp instr' and '21 regs'; '10 cudaStreamSynchronize' counts calls; a range that holds the
    measured value is no contradiction; '= 8-11x' is no one chain; a library prefix names its one kernel); fixes
    ('half the bytes', '-> ~0', a far-above sign, 'from 7.83e8 to 8e7' give a direction, 'double buffering' none;
    migrations and named pipes are what moves; "don't touch" leaves a kernel alone; an FP32 kernel's math moved to
    double, and fewer resident warps for a kernel waiting on memory, are wrong ways); claims (a pipe named as the
    compute limit must be busy; 'the conversion-rate limit' is instruction issue; 'culprit = ...' asserts; a JSON
    false negates; low parallelism is absent where the step's kernels run concurrently; a list of keywords under 3%
    function words is no answer); layouts ('- **Metric:**' after the fix; a log numbered '#1'; '## What limits it
    now' over '## Status').
  - Tried and dropped: an evidence sentence of prose read without a headline number, and labels ('steps 2-5',
    'stream 7', '2^24') skipped (freed 4 false rejects, opened 5 false accepts); a roofline floor matched only in a
    clause naming a floor, with the circular check of two numbers derived from each other (opened 5 false rejects,
    closed none).
  At the session's final critic, against 96e92d1: development sets 22/700 (3.1%), 55/553 (9.9%) (24/700, 55/553);
  old 8/93, 17/80 (9/93, 17/80); blind42+43 6/55, 9/41 (7/55, 10/41); blind46+47 2/56, 11/40 (2/56, 14/40); blind58+59
  3/56, 3/40 (6/56, 14/40, read this session); blind60+61 7/56, 8/40 (11/56, 15/40, read this session); the other
  read pairs unchanged. Never read: blind62+63 6/56 (11%), 10/40 (25%), the same as on arrival; blind44+45 4/53,
  10/43; blind52 2/28, 8/20 (2/28, 9/20).
2026-12-03, seventeenth session (05:08-08:08 UTC):
  - blind62+63 read from 05:15 UTC. blind64-67 (48 answers each, 20 expected accepts, written 05:11-05:26 UTC by
    helpers that never read or ran the critic, over the 48 least-used captures), counts only on arrival at e4cae6b
    (the session's start): blind64 2/28, 8/20; blind65 3/28, 8/20; blind66 1/28, 12/20; blind67 3/28, 5/20; together
    9/112 (8%) and 33/80 (41%). blind66+67 were read from 06:12 UTC; blind64+65 were never read.
  - Changes (tests/critic/test_critic_seventeenth_readings.py, on real captures, most with a twin the critic refuses):
    numbers ('4096 ops/clk/SM' is a per-clock peak; '2-byte loads' is a width; a statistic belongs to its clause;
    'its GEMMs' names the capture's one GEMM kernel; threads counted in warps of 32; a count of things is no byte
    count; '58.2 of the 60.8 ms'; a program's copy time per step; a line labelled '(estimate):' predicts); claims (a
    'Bound:' label is the verdict; the download volume is a cause; the latency of dependent loads is a limit, not
    the roofline; a collective's wait has the straggler the answer names, and a straggler named elsewhere must be
    the late rank; DRAM blamed at under 10% of peak; kernels a program-level verdict blames must hold 25% of the
    window's kernel time; a terse note in arrows is no keyword list); fixes (unpinning a pinned download is the
    wrong way; a bare target ends its metric's clause; 'copy ns per step', 'step median' name what moves; '2.03 ms
    -> tens of microseconds' falls); layouts (an appendix backs the executive summary).
  At the session's final critic, against e4cae6b: development sets 22/700, 55/553 (unchanged); blind62+63 3/56,
  4/40 (6/56, 10/40, read this session); blind66+67 4/56, 9/40 (4/56, 17/40, read this session); blind34+35 2/53,
  7/43 (2/53, 9/43); blind42+43 6/55, 8/41 (6/55, 9/41). Never read: blind64+65 5/56 (9%), 15/40 (38%) (5/56,
  16/40 on arrival); blind44+45 4/53, 8/43 (4/53, 10/43); blind52 2/28, 6/20 (2/28, 8/20).
2026-12-03, eighteenth session (08:20-11:20 UTC):
  - blind68-71 (48 answers each, 20 expected accepts, written 08:22-08:37 UTC by helpers that never read or ran the
    critic, over the 48 least-used captures), counts only on arrival at 8e88b57 (the session's start): blind68 1/28,
    8/20; blind69 7/28, 10/20; blind70 3/28, 5/20; blind71 2/28, 7/20; together 13/112 (12%) and 30/80 (38%). Which
    two to keep unread was drawn by a seeded random choice before any was scored: blind70+71 were read from
    08:40 UTC; blind68+69 were never read.
  - Changes (tests/critic/test_critic_eighteenth_readings.py, on real captures, most with a twin the critic refuses):
    numbers (the blocks a step launches; a total broken down into the parts listed after it; what a change 'buys'
    is the gap; a line that works its value out; a result worked out is an operand of later numbers, an arrow is no
    bound; a count over a named span ('in the steady window') is that count however far off; emphasis around a
    number; a statistic or an API named beside another time is that time's; a size beside a term of a sum);
    claims (a 'Bound:' label below a summary that says the GPU idles; a cause the text says is gone is not claimed
    by the words of its fix, nor a cost its own sentence rules out; a quoted reflex; CPU-side words); fixes ('down
    by well over'; a metric labelled apart moves toward its roofline; device copies moved to host memory, fewer
    blocks for loads that wait at half of DRAM's peak, pageable copies in slices are the wrong way); layouts (a 're:'
    subject line; 'I'd leave this kernel alone' is a verdict; steps after a colon; prose after a JSON object; ncu
    time is program time only where its own clause says so).
  - Tried and dropped: a cause only mentioned in the mechanism taken as the claim when nothing else names one (it
    broke rule tests whose correct answers name a cause in passing); any cause ruled out anywhere in the bottleneck
    dropped from its mentions (it dropped 'the conversion unit is pinned' for 'the issue slots are not the limit').
  At the session's final critic, against 8e88b57: development sets 22/700 (3.1%), 50/553 (9.0%) (22/700, 55/553);
  old 8/93, 13/80 (8/93, 17/80); blind70+71 1/56, 0/40 (5/56, 12/40 on arrival, read this session); blind66+67 4/56,
  7/40 (4/56, 9/40). Never read: blind68+69 8/56 (14%), 19/40 (48%) (8/56, 18/40 on arrival); blind64+65 5/56,
  15/40 (unchanged); blind44+45 4/53, 8/43 (unchanged); blind52 1/28, 7/20 (2/28, 6/20). All never-read sets
  together: 18/193 (9.3%) false accepts (19/193 at the start) and 49/143 (34%) false rejects (47/143): this
  session's rules moved the development sets and did not carry over to the holdouts.
2026-12-03, nineteenth session (11:54-14:54 UTC):
  - blind72-75 (48 answers each, 20 expected accepts, written 11:58-12:12 UTC by helpers that never read or ran the
    critic, over the 48 least-used captures), counts only on arrival at 48c9396 (the session's start): blind72 4/28,
    9/20; blind73 3/28, 8/20; blind74 0/28, 5/20; blind75 5/28, 7/20; together 12/112 (11%) and 29/80 (36%). All four
    stay never read (decided before any was scored).
  - Method: rules chosen by class over all false rejects left in the sets read before (169 of 1,341 correct answers
    outside the holdouts), not one answer at a time. Counted first: 67 of them have a number contradicted by a
    metric the critic assigned, 27 a claim the captures contradict, 26 an unmatched number, 18 no causal chain found,
    14 a fix with no metric or direction (one answer may have several). Levers simulated on those verdicts and not
    built: not refusing unmatched numbers saves 20 correct answers and lets 10 wrong ones through (read sets' false
    accepts 4.8% -> 5.4%); not refusing contradictions no metric name pins saves 32 and lets 26 through; 44 wrong
    answers are refused only for a fix with no metric or direction, against 4 correct ones.
  - Changes (tests/critic/test_critic_nineteenth_readings.py): one-time work set aside in words the critic missed
    ("that's one-time", "Not steady state; reported apart", "happens exactly once", "-> Rejected as the steady-state
    answer", "is the one-time upload") or said to turn into the steady state is not blamed; "which is why", "that's
    where the remaining time goes" assert the cause before them, blanked code spans counting as one space; a size of
    the problem ("131,072 rows", "62 elements") is never contradicted; the best the work could do ("the fastest it
    could possibly go", "at best", "memory floor") is a model's number; a value cut rather than rounded matches; an
    atomic named as one step of the code ("followed by a dependent shared atomic") or counted per block is no claim
    of contention.
  - Tried and dropped: near peak claimed by a fix that leaves the kernel alone when no part names a cause (nine
    correct answers on fixed kernels 1.6-21x from their floors were then refused for claiming near peak); "bytes it
    does not need" as excess DRAM traffic (it is also how an AoS over-fetch is described); one-time work "before the
    first launch" as set apart (it dropped "bound by JIT compilation: Inductor compiles before the first launch").
  At the session's final critic, against 48c9396: the read sets 86/1,753 false accepts and 159/1,341 false rejects
  (85 and 169); development sets 22/700, 43/553 (22/700, 50/553). Never read: blind72-75 12/112 (11%), 28/80 (35%);
  blind64+65 5/56, 14/40 (5/56, 15/40); blind68+69, blind44+45, blind52 unchanged. All eleven never-read sets
  together: 30/305 (9.8%) false accepts and 76/223 (34%) false rejects (30/305 and 78/223 at the start).
2026-12-03, twentieth session (15:21-18:21 UTC), no new set:
  - One structural rule, measured first as a simulation on the recorded verdicts of the read sets: a number its words
    tie to one metric but whose value is, to the precision it is written with, another measured value of its kernel or
    program is matched to that value (critic/same_value.py; the audit names it and what the words suggested). Only a
    time, bytes or a rate written to 1% or better, or a count or ratio with a fraction to three figures; never a share
    (too dense), a device attribute, a ceiling or a peak, nor a per-call statistic its own words claim ("400
    `cudaDeviceSynchronize` calls at 112 us each"). A looser first version (any family, 2% tolerance) would have saved
    39 correct answers and let 24 wrong ones through; limited to those families, still at 2%, 14 and 2, and six
    constructed twins of the rule tests (wrong numbers written to be refused) then equalled some other time fact
    within 2-5%: chance equality is common unless the precision is the one written. As built: 6 saved, none let
    through (the one wrong answer it let through, b35_smem_global, had been refused only for a misread number; the
    catalogue phrase below now refuses it for its claim). A guard added last: a memory level or API function the words
    name is the one the value must be of ("DRAM delivers 2.041 TB/s" for L1's rate); it costs one correct answer
    (b61_sgemm_tf32 calls DRAM's 16.9 GB of reads "read through L2").
  - One catalogue phrase: "poor global load efficiency" (nvprof's gld_efficiency) claims uncoalesced access.
  At the session's final critic, against a37f8f7: the read sets 86/1,753 -> 86/1,753 false accepts and 159/1,341 ->
  153/1,341 false rejects; all eleven never-read sets 30/305 (9.8%) -> 30/305 and 76/223 (34%) -> 75/223 (34%)
  (blind68, 9 -> 8 false rejects; its reasons not read).
2026-12-03, twenty-first session (18:49-21:49 UTC):
  - blind76+77 (48 answers each, 20 expected accepts, written 18:51-19:05 UTC by helpers that never read or ran the
    critic, over 24 captures blind72-75 did not use), counts only on arrival at b18d54b (the session's start):
    blind76 4/28, 6/20; blind77 7/28, 6/20. Neither was read. blind72-75 were read from 18:58 UTC (development sets
    since): their false rejects were the freshest sample of what the critic misreads. The never-read sets are now
    nine: blind44+45, 52, 64+65, 68+69, 76+77.
  - What blind72-75's false rejects showed, by class: a fix whose move the critic did not read (10 of 28: a target
    alone, "-> below 0.1 ms", "to ~0", a fix in a paragraph the layout gave another part), a cause in words the
    catalogue lacked, a layout read into the wrong parts ("The fix did what it was meant to do" read as the fix, a
    verdict in the title), arithmetic written as an excess ("= 1.6% extra"). Changes (tests/critic/
    test_critic_twentyfirst_readings.py): critic/target.py (a target alone moves the way from the value the captures
    hold for what its words name), critic/proposal.py (the last block that proposes a change and states a metric's
    move is the fix when the layout's fix states none), more direction words, causes and wrong-way fixes (a 32x32
    tile without its pad; atomics straight to global words), claim.answer_claim (the title's cause or the sentence
    that names the bottleneck when no part blames one), "8.19 vs 8.18 ms", "measured at 4.8 TB/s" as achieved.
  - Tried and dropped: an ncu duration within 15% (then 3%) of the step median taken as the step's time (rule tests
    hold that 15.49 ms for a 15.1 ms step is not the step's time); "bound" as a label of the verdict (bullets "**Bound:
    latency, ...**" then moved out of the evidence); "bytes/traffic it doesn't need" as excess traffic (the AoS
    over-fetch is described the same way, as the nineteenth session found); any verdict sentence as the claim when no
    part blames a cause ("GEMM-bound with the all-reduce exposed" became a comms claim); a pageable upload split "as
    32,768 small tensors" as wrong-way (the change sits in the mechanism, not the fix part, so it changed nothing).
  At the session's final critic, against b18d54b: the sets read before 86/1,753 -> 84/1,753 false accepts (4.8%) and
  153/1,341 -> 145/1,341 false rejects (10.8%); blind72-75, read this session, 12/112 -> 9/112 and 28/80 -> 12/80.
  Never read: blind76+77 11/56, 12/40 -> 11/56, 13/40; all nine never-read sets 29/249 (11.6%) -> 29/249 and 59/183
  (32%) -> 59/183 (blind68 8 -> 7, blind77 6 -> 7 false rejects; their reasons not read). The rules moved the sets
  they were chosen on and did not carry over to the holdouts.
2026-12-03/04, twenty-second session (22:50-01:50 UTC):
  - blind78+79 (48 answers each, 20 expected accepts, written 22:53-23:05 UTC by helpers that never read or ran the
    critic, over 24 captures blind76+77 did not use), counts only on arrival at e17e1c2 (the session's start):
    blind78 3/28, 4/20; blind79 5/28, 7/20. Neither was read. blind76+77 were read from 22:58 UTC (development sets
    since). The never-read sets are now nine: blind44+45, 52, 64+65, 68+69, 78+79.
  - blind76+77's false rejects were mostly the bound read from the wrong sentence (8 of 13: "fine, leave it" on a
    kernel line of a host-bound answer, "H2 host/launch-bound? -- secondary", "a kernel that should be FMA-bound",
    "no occupancy/latency problem"). Rules chosen to be general rather than per wording, each measured first on the
    recorded verdicts of every read set: an answer that states the timeline's bound in so many words (or a "bound:"
    label) is not refused for a bound read elsewhere (bound_words.affirms; in a log, only the accepted hypothesis
    counts), nor for a kernel bound when it states another its counters allow (kernel_bound.stated_kernel_bound);
    start-up the text sets aside ("one-time, NOT the bottleneck") is not its claim. Two refusals, each measured on the
    read sets before it was kept: a fix measured on a kernel's counter or time for a program whose steady state idles
    the GPU on its host or copies (on the read sets: 89 wrong answers and 2 correct ones have such a fix; the 2
    correct ones name a timeline outcome first, which spares them); a near-peak claim where the engine measures extra
    DRAM passes of an unfused chain, unless the fix fuses (3 wrong answers, no correct one). Direction: "23.06M ->
    <=262k", "26 GB -> tens of MB", a metric "not a problem to chase"; "not the kernel" leaves it; "11.21 + 6.16 ms".
  At the session's final critic, against e17e1c2: the sets read before 93/1,865 -> 92/1,865 false accepts (4.9%) and
  157/1,421 -> 156/1,421 false rejects (11.0%); blind76+77, read this session, 11/56 -> 9/56 and 13/40 -> 6/40. Never
  read: blind78+79 8/56, 11/40, unchanged; all nine never-read sets 26/249 (10.4%) and 57/183 (31%), unchanged, and
  not one of their 432 verdicts changed. The rules, general in form, met none of the holdout answers.
2026-12-04, twenty-third session (05:21-08:21 UTC):
  - blind80+81 (48 answers each, 20 expected accepts, written 05:24-05:36 UTC by helpers that never read or ran the
    critic, over 24 captures blind78+79 did not use), counts only on arrival at a39261c (the session's start):
    blind80 3/28, 5/20; blind81 7/28, 4/20. Neither was read. blind78+79 were read from 05:50 UTC (development sets
    since). The never-read sets are now nine: blind44+45, 52, 64+65, 68+69, 80+81: 28/249 false accepts (11.2%),
    55/183 false rejects (30.1%).
  - blind78+79 read: their 8 false accepts all had no claim the reader recognised (a cause in words the catalogue
    lacks: "a memory kernel", "synchronization inside the block reduction", "overhead of the split"), so nothing was
    checked; of their 11 false rejects, 5 rested only on what the checks could not confirm. Two general rules were
    measured on the recorded verdicts of every read set (3,478 answers) and dropped: reading the claim from the
    mechanism or the whole text when no part names one (121 right verdicts broken for 25 fixed), and refusing for a
    single number bound only by its sentence's words no more (67 false rejects lifted, 47 false accepts added).
    The deterministic reader is at its frontier on these features: what one set's misreadings teach does not reach
    the next set.
  - So the change of this session is where a rejection goes, not which answers are rejected. critic/grounds.py:
    every rejection is `contradicted` (a measurement disagrees with the answer) or `unconfirmed` (only numbers the
    words did not bind, a chain or a fix outcome not found). ask's model reviewer, which judged every acceptance,
    now also settles unconfirmed rejections (their reasons in its prompt); critique --review claude does the same for
    an answer handed to the CLI. Nothing in the deterministic verdicts changed. Counted by this script: unconfirmed
    are 99 of the 173 false rejects and 483 of the 1,868 right rejects of the read sets, and 28 of 55 and 70 of 221
    on the never-read sets. Whether a model settles them well is not measured: no API access here.
"""
from __future__ import annotations

import argparse
import gzip
import lzma
import shutil
import sys
import tempfile
import tomllib
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from kernel_profiler.critic import AnswerFormatError, critique_text

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def materialise(case: str, name: str, work: Path) -> Path:
    out = work / case / name
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    src = DATA / "captures" / case / name
    if src.exists():
        shutil.copy(src, out)
    elif (src.parent / (name + ".gz")).exists():  # "trace.json": the bundled trace.json.gz, decompressed
        with gzip.open(src.parent / (name + ".gz")) as fi, open(out, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    else:
        with lzma.open(DATA / "captures" / case / (name + ".xz")) as fi, open(out, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    return out


def _without_unreadable(run, paths: list[Path]):
    """run(paths), leaving out each cited file the tool cannot read (the error names it), as a user would pass only
    files it reads."""
    from kernel_profiler.errors import UnknownFormat

    while True:
        try:
            return run(paths)
        except UnknownFormat as e:
            rest = [p for p in paths if str(p) != e.path]
            if len(rest) == len(paths):
                raise
            paths = rest


def critique_cited(text: str, paths: list[Path]):
    """The critic's verdict on the files an answer cites (a program's own log, run.log, is read as one)."""
    return _without_unreadable(lambda ps: critique_text(text, ps), paths)


def reviewed_cited(text: str, paths: list[Path], spec: str):
    """The verdict with the model reviewer of `critique --review SPEC` (kernel_profiler.agent.second_opinion) on the
    files an answer cites."""
    from kernel_profiler.agent.second_opinion import reviewed, reviewer

    model = reviewer(spec)
    notice = lambda m: print(f"  notice: {m}", file=sys.stderr)  # noqa: E731
    return _without_unreadable(lambda ps: reviewed(text, [str(p) for p in ps], model, notice), paths)


def score(set_name: str, verbose: bool, review: str = "") -> tuple[int, int, int, int, list[str], tuple[int, int]]:
    """(false accepts, expected rejects, false rejects, expected accepts, the misses' lines when verbose,
    (false rejects, right rejects) whose reasons are all unconfirmed: critic.grounds)."""
    root = DATA / set_name
    answers = tomllib.loads((root / "cases.toml").read_text())["answer"]
    fa = fr = n_rej = n_acc = 0
    unsure = [0, 0]
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        for a in answers:
            paths = [materialise(a["case"], n, Path(tmp)) for n in a["artifacts"]]
            try:
                text = (root / a["file"]).read_text(encoding="utf-8")
                v = reviewed_cited(text, paths, review) if review else critique_cited(text, paths)
                got, reasons, grounds = v.verdict, "; ".join(v.reasons), v.grounds
            except AnswerFormatError as e:
                got, reasons, grounds = "reject", f"unreadable: {e}", None  # (not an answer `ask` can get)
            if grounds == "unconfirmed":
                unsure[a["expected"] == "reject"] += 1
            expected = a["expected"]
            n_rej += expected == "reject"
            n_acc += expected == "accept"
            if got != expected:
                fa += expected == "reject"
                fr += expected == "accept"
                if verbose:
                    misses.append(f"  {'FALSE ACCEPT' if expected == 'reject' else 'FALSE REJECT'} {a['id']} "
                                  f"({a['category']}): {reasons[:400]}")
    return fa, n_rej, fr, n_acc, misses, (unsure[0], unsure[1])


def all_sets() -> list[str]:
    """Every answer set under tests/data: the development set, its holdout, then the blind sets by number."""
    found = [p.parent.name for p in DATA.glob("adversarial*/cases.toml")]
    return sorted(found, key=lambda n: (n.startswith("adversarial_blind"), int(n[17:]) if n[17:].isdigit() else 0, n))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Score the critic on the adversarial answer sets (issue 10).")
    ap.add_argument("sets", nargs="*", help="sets under tests/data (default: every adversarial set there)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every miss with the critic's reasons")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="sets scored at once (default 1)")
    ap.add_argument("--review", default="", metavar="claude[:NAME]",
                    help="score the critic with its model reviewer, as `critique --review` runs it (needs "
                         "ANTHROPIC_API_KEY; never run where this was built: no API access there)")
    args = ap.parse_args(argv)
    if args.review:
        from kernel_profiler.agent.second_opinion import reviewer
        from kernel_profiler.errors import UsageError

        try:
            reviewer(args.review)  # a bad spec or no key: one line, before any set is scored
        except UsageError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    verbose, jobs = args.verbose, max(args.jobs, 1)
    sets = args.sets or all_sets()
    unknown = [s for s in sets if not (DATA / s / "cases.toml").is_file()]
    if unknown:
        print(f"error: no answer set {unknown[0]!r} under {DATA} (a set is a folder with cases.toml)", file=sys.stderr)
        return 2
    # each set in a fresh process: one process that loads many sets' captures one after another keeps gigabytes it
    # no longer uses, and all the sets in one would not fit a 24 GiB machine
    totals = [0, 0, 0, 0, 0, 0]
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), max_tasks_per_child=1) as pool:
        for s, (fa, n_rej, fr, n_acc, misses, (u_fr, u_tr)) in zip(sets, pool.map(score, sets, [verbose] * len(sets), [args.review] * len(sets))):
            print(f"{s}: false accepts {fa}/{n_rej} ({fa / n_rej:.0%}, goal <= 5%), "
                  f"false rejects {fr}/{n_acc} ({fr / n_acc:.0%}, goal <= 10%); unconfirmed: {u_fr} of the false "
                  f"rejects, {u_tr} of the {n_rej - fa} right rejects", flush=True)
            for line in misses:
                print(line)
            totals = [t + x for t, x in zip(totals, (fa, n_rej, fr, n_acc, u_fr, u_tr))]
    fa, n_rej, fr, n_acc, u_fr, u_tr = totals
    print(f"all {len(sets)} sets: false accepts {fa}/{n_rej} ({fa / max(n_rej, 1):.1%}), "
          f"false rejects {fr}/{n_acc} ({fr / max(n_acc, 1):.1%})")
    # a rejection resting only on what the checks could not confirm goes to the model reviewer in `ask` when one is
    # available (critic.grounds): the false rejects it could lift, the right rejects it must uphold
    print(f"  unconfirmed rejections (a model reviewer settles them in ask): {u_fr} of the {fr} false rejects, "
          f"{u_tr} of the {n_rej - fa} right rejects")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
