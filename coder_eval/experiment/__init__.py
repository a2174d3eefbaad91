"""Experiments: variants of an agent set-up, merged over tasks in five layers, run on the same tasks.

Example::

    from coder_eval.experiment import CommandLine, Selection, load_experiment, resolve
    resolution = resolve(load_experiment(Path("experiments/skill_ab.yaml")), [Path("tasks")],
                         CommandLine(defines=("run_limits.max_turns=10",)), Selection(sample_tasks=20))
    resolution.plans[0].provenance["run_limits.max_turns"]    # 'cli'
"""

from coder_eval.experiment.merge import MERGE_RULES, Layer, Merged, merge_layers, provenance
from coder_eval.experiment.mutations import PromptMutations, mutate_prompt
from coder_eval.experiment.overrides import overrides_layer, parse_define
from coder_eval.experiment.resolve import CommandLine, Resolution, Suite, resolve
from coder_eval.experiment.spec import (
    DEFAULT_EXPERIMENT,
    Experiment,
    ExperimentSpec,
    Variant,
    VariantSpec,
    default_experiment,
    experiment_path,
    load_experiment,
)
from coder_eval.experiment.task_selection import Selection, select

__all__ = [
    "DEFAULT_EXPERIMENT",
    "MERGE_RULES",
    "CommandLine",
    "Experiment",
    "ExperimentSpec",
    "Layer",
    "Merged",
    "PromptMutations",
    "Resolution",
    "Selection",
    "Suite",
    "Variant",
    "VariantSpec",
    "default_experiment",
    "experiment_path",
    "load_experiment",
    "merge_layers",
    "mutate_prompt",
    "overrides_layer",
    "parse_define",
    "provenance",
    "resolve",
    "select",
]
