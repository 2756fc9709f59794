"""Running a plan, the step above the experiments: the runner, the plan files it is given, and the checks
before a run (`kit hosts check`, `kit check`)."""
