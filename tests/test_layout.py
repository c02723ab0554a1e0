"""Every module of ``dpaudit/`` and ``mechanisms/`` has its mirrored test file, or says where it
is tested.

The mirror of ``dpaudit/auditor/run/refine.py`` is ``tests/dpaudit/auditor/run/test_refine.py``
(issue 44: tests mirror the package). A module tested through another module's tests (the CLI
through ``dpaudit.cli.main``, the catalog through ``dpaudit.catalog``, the recheck helpers through
``dpaudit.recheck``) is listed in ``COVERED_ELSEWHERE`` with the test file that covers it. The
modules in ``NOT_YET_MIRRORED`` have neither yet: the list only shrinks (a module gains a mirror
or an entry in ``COVERED_ELSEWHERE``, and this test says to remove it from the list).
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: ``{module: the test file that covers it}`` for modules tested through another module.
COVERED_ELSEWHERE = {
    "dpaudit/corpus/integer_noise.py": "tests/dpaudit/corpus/test_corpus_partition_selection.py",
    "dpaudit/cli/dask_options.py": "tests/dpaudit/cli/test_bad_inputs.py",
    "dpaudit/plan_evidence.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/exact/verify_blocks.py": "tests/dpaudit/exact/test_verify_distributed.py",
    "dpaudit/exact/noise_variables.py": "tests/dpaudit/exact/test_laplace_calculus.py",
    "dpaudit/exact/piecewise_exp.py": "tests/dpaudit/exact/test_laplace_calculus.py",
    "dpaudit/integrations/opendp_claim.py": "tests/dpaudit/integrations/test_opendp_measurement.py",
    "dpaudit/integrations/opendp_input.py": "tests/dpaudit/integrations/test_opendp_measurement.py",
    "dpaudit/integrations/opendp_output.py": "tests/dpaudit/integrations/test_opendp_measurement.py",
    "dpaudit/neighbours/local_pairs.py": "tests/dpaudit/neighbours/test_local_search.py",
    "dpaudit/auditor/greybox/importance.py": "tests/dpaudit/auditor/greybox/test_greybox_importance.py",
    "dpaudit/auditor/greybox/laws.py": "tests/dpaudit/auditor/greybox/test_greybox_laws.py",
    "dpaudit/auditor/greybox/recording.py": "tests/dpaudit/auditor/greybox/test_greybox_recording.py",
    "dpaudit/auditor/greybox/replay.py": "tests/dpaudit/auditor/greybox/test_greybox_replay.py",
    "dpaudit/auditor/greybox/scan.py": "tests/dpaudit/auditor/greybox/test_greybox_scan.py",
    "dpaudit/auditor/greybox/traces.py": "tests/dpaudit/auditor/greybox/test_greybox_traces.py",
    "dpaudit/auditor/offline/files.py": "tests/dpaudit/auditor/offline/test_offline.py",
    "dpaudit/auditor/offline/plan.py": "tests/dpaudit/auditor/offline/test_offline.py",
    "dpaudit/auditor/offline/readers.py": "tests/dpaudit/auditor/offline/test_offline.py",
    "dpaudit/auditor/offline/simulate.py": "tests/dpaudit/auditor/offline/test_offline.py",
    "dpaudit/auditor/offline/source.py": "tests/dpaudit/auditor/offline/test_offline.py",
    "dpaudit/auditor/results/result.py": "tests/dpaudit/auditor/results/test_result_format.py",
    "dpaudit/auditor/run/budgeting.py": "tests/dpaudit/auditor/run/test_runner.py",
    "dpaudit/auditor/run/execution.py": "tests/dpaudit/auditor/run/test_runner.py",
    "dpaudit/auditor/run/live.py": "tests/dpaudit/auditor/run/test_live_replay_check.py",
    "dpaudit/auditor/values/events.py": "tests/dpaudit/auditor/values/test_outcome_events.py",
    "dpaudit/catalog/base.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/entry.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/exponential.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/joint.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/limit_domain.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/noisy_max.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/sessions.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/sparse_vector.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/threshold.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/catalog/values.py": "tests/dpaudit/test_catalog.py",
    "dpaudit/checkpoint.py": "tests/dpaudit/auditor/test_checkpoint.py",
    "dpaudit/cli/audit.py": "tests/dpaudit/cli/test_cli_audit.py",
    "dpaudit/cli/compare.py": "tests/dpaudit/cli/test_cli_compare.py",
    "dpaudit/cli/plan.py": "tests/dpaudit/cli/test_cli_plan.py",
    "dpaudit/cli/recheck.py": "tests/dpaudit/cli/test_cli_recheck.py",
    "dpaudit/cli/select.py": "tests/dpaudit/cli/test_cli_select.py",
    "dpaudit/cli/verify.py": "tests/dpaudit/cli/test_cli_verify.py",
    "dpaudit/cli/worst_case.py": "tests/dpaudit/cli/test_cli_worst_case.py",
    "dpaudit/comparison.py": "tests/dpaudit/test_compare.py",
    "dpaudit/consistency.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/corpus/entry.py": "tests/dpaudit/corpus/test_corpus_exact.py",
    "dpaudit/corpus/exact.py": "tests/dpaudit/corpus/test_corpus_exact.py",
    "dpaudit/corpus/float_noise.py": "tests/dpaudit/corpus/test_corpus_float_noise.py",
    "dpaudit/corpus/histogram/counts.py": "tests/dpaudit/corpus/test_corpus_histogram.py",
    "dpaudit/corpus/histogram/geometric.py": "tests/dpaudit/corpus/test_corpus_histogram.py",
    "dpaudit/corpus/histogram/privbayes.py": "tests/dpaudit/corpus/test_corpus_histogram.py",
    "dpaudit/corpus/histogram/regression.py": "tests/dpaudit/corpus/test_corpus_histogram.py",
    "dpaudit/corpus/histogram/sums.py": "tests/dpaudit/corpus/test_corpus_histogram.py",
    "dpaudit/corpus/noisy_max.py": "tests/dpaudit/corpus/test_corpus_noisy_max.py",
    "dpaudit/corpus/partition_selection.py": "tests/dpaudit/corpus/test_corpus_partition_selection.py",
    "dpaudit/corpus/sparse_vector/adaptive.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/base.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/gap.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/laws.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/lyu.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/nvflare.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/parallel.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/corpus/sparse_vector/statdp.py": "tests/dpaudit/corpus/test_corpus_sparse_vector.py",
    "dpaudit/display.py": "tests/dpaudit/test_result_display.py",
    "dpaudit/exact/certify/bounds.py": "tests/dpaudit/exact/test_certify.py",
    "dpaudit/exact/certify/certificate.py": "tests/dpaudit/exact/test_certify.py",
    "dpaudit/exact/certify/interval.py": "tests/dpaudit/exact/test_certify.py",
    "dpaudit/exact/certify/result.py": "tests/dpaudit/exact/test_certify.py",
    "dpaudit/exact/certify/search.py": "tests/dpaudit/exact/test_certify.py",
    "dpaudit/exact/certify/shapes.py": "tests/dpaudit/exact/test_certify_shapes.py",
    "dpaudit/exact/certify/top_stable.py": "tests/dpaudit/exact/test_certify_top_stable.py",
    "dpaudit/exact/certify/top_stable_bounds.py": "tests/dpaudit/exact/test_certify_top_stable.py",
    "dpaudit/exact/certify/top_stable_search.py": "tests/dpaudit/exact/test_certify_top_stable.py",
    "dpaudit/levels.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/neighbours/candidates.py": "tests/dpaudit/test_candidates.py",
    "dpaudit/neighbours/pairs.py": "tests/dpaudit/test_neighbours.py",
    "dpaudit/neighbours/relations.py": "tests/dpaudit/test_neighbours.py",
    "dpaudit/neighbours/threshold_search.py": "tests/dpaudit/test_threshold_search.py",
    "dpaudit/pytest_plugin/cache.py": "tests/dpaudit/test_pytest_plugin.py",
    "dpaudit/pytest_plugin/fingerprint.py": "tests/dpaudit/test_pytest_plugin.py",
    "dpaudit/pytest_plugin/results.py": "tests/dpaudit/test_pytest_plugin.py",
    "dpaudit/pytest_plugin/run.py": "tests/dpaudit/test_pytest_plugin.py",
    "dpaudit/pytest_plugin/settings.py": "tests/dpaudit/test_pytest_plugin.py",
    "dpaudit/pytest_plugin/summary.py": "tests/dpaudit/test_pytest_plugin.py",
    "dpaudit/rebuild.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/file_problems.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/result_files.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/witness_checks.py": "tests/dpaudit/test_recheck.py",
    "dpaudit/report.py": "tests/dpaudit/auditor/test_audit_report.py",
    "dpaudit/rerun.py": "tests/dpaudit/test_recheck.py",
    "mechanisms/accounting.py": "tests/mechanisms/test_accounting_basic.py",
    "mechanisms/joint/bounds.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/grid.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/knots.py": "tests/mechanisms/test_joint_knots.py",
    "mechanisms/joint/limits.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/mechanism.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/prepared.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/set_count.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/set_sampling.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/shuffles.py": "tests/mechanisms/test_joint.py",
    "mechanisms/joint/subsets.py": "tests/mechanisms/test_joint.py",
    "dpaudit/cli/errors.py": "tests/dpaudit/cli/test_cli_errors.py",
    "dpaudit/auditor/greybox/argmax_weights.py": (
        "tests/dpaudit/auditor/greybox/test_greybox_importance.py"
    ),
    "dpaudit/auditor/greybox/declared_support.py": (
        "tests/dpaudit/auditor/greybox/test_structural_delta.py"
    ),
    "dpaudit/auditor/greybox/tilt_probe.py": (
        "tests/dpaudit/auditor/greybox/test_structural_delta.py"
    ),
    "dpaudit/auditor/values/candidates.py": "tests/dpaudit/auditor/test_value_audits.py",
}

#: Modules with no test of their own yet (issue 44): empty, and it stays so (a new module comes
#: with its mirror).
NOT_YET_MIRRORED: set[str] = set()


def _modules():
    for package in ("dpaudit", "mechanisms"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name not in ("__init__.py", "__main__.py"):
                yield path.relative_to(ROOT).as_posix()


def mirror(module: str) -> str:
    """The mirrored test file of ``module``: ``a/b/c.py`` -> ``tests/a/b/test_c.py``."""
    path = Path(module)
    return (Path("tests") / path.parent / f"test_{path.name}").as_posix()


@pytest.mark.parametrize("module", list(_modules()))
def test_every_module_has_its_tests(module):
    mirrored = (ROOT / mirror(module)).exists()
    if module in NOT_YET_MIRRORED:
        assert not mirrored, f"{module} has {mirror(module)} now: remove it from NOT_YET_MIRRORED"
        return
    if module in COVERED_ELSEWHERE:
        assert (ROOT / COVERED_ELSEWHERE[module]).exists(), COVERED_ELSEWHERE[module]
        return
    assert mirrored, (
        f"{module} has no {mirror(module)}: add it, or list the module in COVERED_ELSEWHERE "
        "with the test file that covers it"
    )


def test_the_lists_name_existing_modules():
    modules = set(_modules())
    assert set(COVERED_ELSEWHERE) <= modules, set(COVERED_ELSEWHERE) - modules
    assert modules >= NOT_YET_MIRRORED, NOT_YET_MIRRORED - modules
    assert not set(COVERED_ELSEWHERE) & NOT_YET_MIRRORED
