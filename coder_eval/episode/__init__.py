"""One episode, step by step: ``runner.run_episode`` is the recipe, each step a module beside it.

- ``plan``: what an episode is before it runs (a task, a variant, a repeat);
- ``stage``, ``skill_offer``: the agent's sandbox and what it is offered; ``agent_phase``, ``watch``,
  ``limits``, ``iterations``: the agent under its limits, turn by turn;
- ``verifier``, ``pristine``, ``grader_files``, ``template_files``: a fresh sandbox where the graders
  run on the final workspace, with the task's files as they were; ``grading``: verdicts, score, outcome;
- ``snapshots``, ``skill_record``, ``salvage``: what the trajectory keeps, even when the harness fails.
"""
