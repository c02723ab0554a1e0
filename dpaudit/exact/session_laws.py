"""Exact law of a pay-what-you-get session transcript under a fixed analyst policy.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 2: the transcript ``(o_1, o_2, ...)`` is a chain
of LimitDomain answers, each run on the same histogram with the ``(k_i, k̄_i)`` the
policy picks from the answers before it, each charging ``|o_i|`` to k*. Its law is the
product of the LimitDomain laws along every path of that chain (seed 003 Alg. 1 through
[`dpaudit.exact.gumbel_laws.limit_domain_law`][dpaudit.exact.gumbel_laws.limit_domain_law]), summed
per transcript. The outcome keys are the transcripts as
[`mechanisms.session_transcript.MultiLimitDomainTranscript`][mechanisms.session_transcript.MultiLimitDomainTranscript]
samples them: the answers concatenated.
"""

from __future__ import annotations

import mpmath

from mechanisms.histogram import TopCounts, validate_counts
from mechanisms.session_transcript import MultiLimitDomainTranscript

from .law import output_law, working_precision

__all__ = ["transcript_law"]


@output_law.register(MultiLimitDomainTranscript)
def transcript_law(mech: MultiLimitDomainTranscript, counts) -> dict:
    """Law of a whole session transcript: every answer path, its probability, summed.

    Seed 003 Alg. 2 (charge ``|o_i|``, ⊥ included, by ``mech.config.charge``), each answer's
    law seed 003 Alg. 1 at 50 digits. The number of paths grows like (answers per
    query)^ℓ*: tiny domains only (d <= 4, ℓ* <= 4 take well under a second).

    Parameters
    ----------
    mech : the MultiLimitDomainTranscript (budgets, charge rule, analyst policy).
    counts : the histogram every query runs on.
    """
    if not isinstance(counts, TopCounts):
        counts = validate_counts(counts)
    config = mech.config
    answer_laws: dict = {}
    law: dict = {}

    def answer_law(query):
        key = (query.k, query.kbar)
        if key not in answer_laws:
            answer_laws[key] = tuple(
                output_law(config.limit_domain(query.k, query.kbar), counts).items()
            )
        return answer_laws[key]

    with working_precision():

        def walk(answers, flat, remaining_k, remaining_q, probability):
            query = mech.next_query(answers, remaining_k, remaining_q)
            if query is None:
                law[flat] = law.get(flat, mpmath.mpf(0)) + probability
                return
            for answer, p in answer_law(query):
                walk(
                    answers + (answer,),
                    flat + answer,
                    remaining_k - config.charge(answer),
                    remaining_q - 1,
                    probability * p,
                )

        walk((), (), config.total_k, config.max_queries, mpmath.mpf(1))
    return law
