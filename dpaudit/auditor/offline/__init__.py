"""Offline audits: a plan of histograms and sample sizes, outcome files, bounds from the files.

For systems that cannot be driven by the auditor. The live audit
([`runner`][dpaudit.auditor.run.runner]) is adaptive: screening picks pairs before selection and
confirmation draw, which needs round trips to the system. The offline audit is NON-adaptive:

1. [`write_plan`][dpaudit.auditor.offline.write_plan] (``dpaudit plan``) fixes everything in
   advance: the claim, the relation, alpha, the candidate pairs (default families thinned to
   ``max_pairs``, or the user's ``counts``/``pairs``), every distinct histogram with an id, and for
   each histogram the number of outcomes wanted in each of two splits, ``select`` and
   ``confirm``. Files: ``DIR/plan.json``, ``DIR/histograms.csv``, ``DIR/README.txt``.
2. The user runs the system and writes ``DIR/outcomes/<id>.<split>.{csv,jsonl,parquet}``:
   one outcome per row, exactly the planned number of rows (``OUTCOME_FORMAT``).
   [`fill_outcomes`][dpaudit.auditor.offline.fill_outcomes] does this with any dpaudit mechanism
   (tests, examples).
3. [`audit_from_samples`][dpaudit.auditor.offline.audit_from_samples]
   (``dpaudit audit --from-samples DIR``) validates the files, ranks the pairs with the screening
   scorer ([`screening.screen_scores`][dpaudit.auditor.search.screening.screen_scores],
   [`screening.survivors`][dpaudit.auditor.search.screening.survivors]) and chooses events
   ([`selection.choose_events`][dpaudit.auditor.search.selection.choose_events]) on the ``select`` split
   ONLY, then bounds the chosen events on the ``confirm`` split
   ([`confirmation.confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events]) with one-sided
   Clopper–Pearson intervals at ``alpha / (2 M)``, ``M`` the number of chosen events (Bonferroni).

Why the bounds are valid (hold together with probability >= 1 − alpha):

* every choice — the kept pairs, the events and their number ``M`` — is a function of
  the plan and the select split only; nothing is chosen from the confirm split;
* the sample sizes are fixed by the plan before anything is drawn (a file with more or
  fewer rows is refused), so there is no optional stopping;
* IF the confirm rows are drawn independently of the select rows (fresh randomness), then
  conditionally on the select split the confirm rows of histogram ``c`` are i.i.d. draws
  of the system on ``c``, independent of the choices; each of the ``2 M`` one-sided
  intervals then covers with probability >= 1 − alpha / (2 M) given the choices, and by
  the union bound all of them cover with probability >= 1 − alpha, given the select split
  and hence unconditionally (the proof of [`confirmation`][dpaudit.auditor.confirm.confirmation], with the
  select split in the role of the screening and selection phases).

What the user must guarantee (the files cannot show it all):

* every row is one run of the system on exactly that histogram, with fresh randomness
  (no cached outputs, no seed shared between rows, files or splits);
* the confirm split is drawn independently of the select split: never copy, reuse,
  subsample or reorder select rows into the confirm files (or rows of one histogram into
  another's); copies at any offset, and repeated rows of real values, beyond what chance
  explains are refused ([`dpaudit.auditor.offline.reuse`][dpaudit.auditor.offline.reuse] says precisely what is and
  is not detected: a shuffled copy of integer outcomes cannot be);
* one set of outcome files per plan: drawing new files until the verdict changes voids
  the confidence (``r`` attempts: failure probability up to ``r · alpha``). ``plan.json``
  carries a digest of its content, and an edited plan is refused.

Trade-off: without round trips the confirm split is drawn for EVERY histogram but used
only for the ``keep`` pairs kept, so an offline audit of ``TOTAL`` samples confirms on
fewer samples than a live one (40 pairs, keep 2: about 4 histograms out of ~60).

Modules: [`plan`][dpaudit.auditor.offline.plan] (the plan and its files),
[`files`][dpaudit.auditor.offline.files] and [`readers`][dpaudit.auditor.offline.readers] (outcome
files, refusing reused rows), [`simulate`][dpaudit.auditor.offline.simulate]
([`fill_outcomes`][dpaudit.auditor.offline.fill_outcomes]),
[`source`][dpaudit.auditor.offline.source] ([`FileDraws`][dpaudit.auditor.offline.source.FileDraws],
the files as a sample source of [`dpaudit.auditor.run.pipeline`][dpaudit.auditor.run.pipeline], and
[`audit_from_samples`][dpaudit.auditor.offline.audit_from_samples]).
"""

from .files import file_sha256, outcome_path, write_outcomes
from .plan import (
    DEFAULT_MAX_PAIRS,
    DEFAULT_SELECT_SHARE,
    EXTENSIONS,
    FORMAT,
    FORMAT_VERSION,
    MIN_PER_HISTOGRAM,
    OUTCOME_FORMAT,
    SPLITS,
    OfflineInputError,
    make_plan,
    read_plan,
    write_plan,
)
from .readers import read_outcomes
from .simulate import fill_outcomes
from .source import FileDraws, FileSchedule, audit_from_samples

__all__ = [
    "DEFAULT_MAX_PAIRS",
    "DEFAULT_SELECT_SHARE",
    "EXTENSIONS",
    "FORMAT",
    "FORMAT_VERSION",
    "MIN_PER_HISTOGRAM",
    "OUTCOME_FORMAT",
    "SPLITS",
    "FileDraws",
    "FileSchedule",
    "OfflineInputError",
    "audit_from_samples",
    "file_sha256",
    "fill_outcomes",
    "make_plan",
    "outcome_path",
    "read_outcomes",
    "read_plan",
    "write_outcomes",
    "write_plan",
]
