# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Classification report
#
# How well a labelling criterion's observed label matches the label the task expected (for example
# *which skill did the agent load* against the dataset row's answer). Each item is one valid episode's
# verdict of that criterion; a missing label counts as the label `none`.

# %% tags=["parameters"]
run_dir: str = "../runs/latest"  # run directory: runs/<run_id> or runs/latest
criterion: str = ""  # labelled criterion id; empty: the only criterion with labels
variant: str = ""  # only this variant's episodes; empty: all variants pooled
summary_path: str = ""  # file for the headline numbers as JSON; empty: not written

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

import coder_eval.analysis as ca
from coder_eval.analysis import plots
from coder_eval.errors import AnalysisError, unknown_name
from coder_eval.analysis import html_table, load_report_runs, md_text, readable, show_scripted_banner, trajectory_links, write_summary
from coder_eval.analysis import verdicts

pd.set_option("display.precision", 3)
runs, notes = load_report_runs(run_dir)
criteria = runs.criteria
if variant and variant not in set(runs.episodes.variant_id):
    raise AnalysisError(unknown_name("variant", variant, set(runs.episodes.variant_id)))
chosen = criteria[criteria.variant_id == variant] if variant else criteria
result = ca.classification(chosen, criterion or None)
show_scripted_banner(runs.episodes)
declared = verdicts(runs)
label_why = {"precision": "label never observed", "recall": "label never expected", "f1": "precision or recall undefined"}

# %% [markdown]
# ## What is classified

# %%
for note in notes:
    display(Markdown(f"**Note:** {md_text(note)}"))
items = result.rows
description = items.description.iloc[0] or "(no description)"
display(
    Markdown(
        f"Criterion **{md_text(result.criterion_id)}**: {md_text(description)}. {result.n} items from "
        f"{items.task_id.nunique()} tasks, variants {md_text(', '.join(sorted(items.variant_id.unique())))}."
    )
)
in_headline = sorted(set(items.task_id) & set(declared.selection.tasks))
display(
    Markdown(
        f"Of these tasks, {items.task_id.nunique() - len(in_headline)} are classification-only: left out of the "
        f"pass-rate headline ({md_text(declared.selection.description)}) and scored here."
        + (f" **Headline comparison:** {md_text(declared.line())}." if declared.available else "")
    )
)

# %% [markdown]
# ## Each arm
#
# How each variant classifies, on its own: its confusion matrix (rows are the expected label, columns
# the observed one; the diagonal is correct), its accuracy and macro F1, and each label's precision and
# recall. In an A/B run the arms classify differently (an arm without the skill never observes it), so
# they are shown apart first; the next section pools them.

# %%
by_variant = {v: ca.classification(chosen[chosen.variant_id == v], result.criterion_id) for v in sorted(items.variant_id.unique())}
size = 1.2 * len(result.confusion) + 2
fig, axes = plt.subplots(1, len(by_variant), figsize=(size * len(by_variant), size - 0.5), squeeze=False)
for ax, (v, r) in zip(axes[0], by_variant.items()):
    plots.confusion_plot(r, ax)
    ax.set_title(f"{plots.plain_text(v)}: accuracy {'n/a' if pd.isna(r.accuracy) else f'{r.accuracy:.0%}'} (n={r.n})")
plt.tight_layout()
plt.show()
per_variant = pd.DataFrame(
    [
        {"variant_id": v, "n": r.n, "accuracy": r.accuracy, "accuracy_low": r.accuracy_low,
         "accuracy_high": r.accuracy_high, "macro_f1": r.macro_f1}
        for v, r in by_variant.items()
    ]
)
display(readable(per_variant.set_index("variant_id"), why={"accuracy": "no items", "macro_f1": "no items"}))
label_columns = ["support", "precision", "precision_low", "precision_high", "recall", "recall_low", "recall_high", "f1"]
per_label = pd.concat({v: r.per_label.set_index("label")[label_columns] for v, r in by_variant.items()}, names=["variant_id"])
display(readable(per_label, why=label_why))

# %% [markdown]
# ## All arms pooled
#
# Every selected variant's items together (with one variant, the same as above). *Precision* of a
# label: of the items observed as that label, the share that expected it. *Recall*: of the items that
# expected it, the share observed as it. *F1* is their harmonic mean; *macro F1* the mean F1 over
# labels. Intervals are 95 %: Wilson for accuracy, precision and recall when each task has one item, a
# cluster bootstrap over tasks when tasks have several (repeats or variants), and always a cluster
# bootstrap for F1 (the `method` column, and the text beside the accuracy, say which).

# %%
fig, ax = plt.subplots(figsize=(1.2 * len(result.confusion) + 2, 1.0 * len(result.confusion) + 1.5))
plots.confusion_plot(result, ax)
plt.show()
headline = readable(
    pd.DataFrame([{"accuracy": result.accuracy, "accuracy_low": result.accuracy_low,
                   "accuracy_high": result.accuracy_high, "macro_f1": result.macro_f1}]),
    why={"accuracy": "no items", "macro_f1": "no items"},
).iloc[0]
display(
    Markdown(
        f"**Accuracy {headline.accuracy}** (95% CI {headline.accuracy_low}–{headline.accuracy_high}, "
        f"{result.accuracy_method}, n = {result.n}); **macro F1 {headline.macro_f1}**."
    )
)
display(result.confusion)
readable(result.per_label.set_index("label"), why=label_why)

# %% [markdown]
# ## Misclassified items
#
# Every item whose observed label differs from the expected one, with the task's prompt and a link to
# the trajectory.

# %%
wrong = result.misclassified.merge(
    runs.episodes[["run_id", "episode_id", "prompt", "path"]], on=["run_id", "episode_id"], how="left"
)
wrong = wrong.assign(trajectory=wrong.path.map(lambda p: trajectory_links([p])))
display(Markdown(f"**{len(wrong)} of {result.n} items misclassified.**"))
HTML(html_table(wrong[["episode_id", "variant_id", "expected", "observed", "prompt", "trajectory"]], links=["trajectory"], index=False))

# %%
write_summary(
    summary_path,
    run_ids=sorted(items.run_id.unique()),
    criterion_id=result.criterion_id,
    variant=variant or None,
    n=result.n,
    accuracy=result.accuracy,
    accuracy_low=result.accuracy_low,
    accuracy_high=result.accuracy_high,
    macro_f1=result.macro_f1,
    confusion=result.confusion.to_dict(orient="index"),
    per_label=result.per_label,
    per_variant=per_variant,
    n_misclassified=len(wrong),
    verdict=declared.headline(),
)
