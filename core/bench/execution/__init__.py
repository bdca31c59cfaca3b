"""Running one execution: search strategy -> SLO experiments -> repetitions -> verdicts -> results.

Split by concern, as the Theodolite method splits it:

* :mod:`~bench.execution.run`: the run as a whole (``Engine``): result id, configuration
  files, resume check, platform open and close, the search, the final table;
* :mod:`~bench.execution.experiments`: one SLO experiment (``ExperimentRunner``): its
  repetitions, retries after faults, repetitions read back on resume, the provisional
  table and the time estimate;
* :mod:`~bench.execution.collector`: one repetition's SLI samples (``SliCollector``);
* :mod:`~bench.slo.evaluator`: SLO verdicts across repetitions and the early
  decisions (``SloEvaluator``);
* :mod:`~bench.execution.deployment`: the objects and parameter values of an experiment;
* :mod:`~bench.execution.config`: what a run is given and what it returns.

None of these knows Spark, Kafka or Kubernetes: a platform is driven through
``bench.api.Platform`` and SLOs are judged by their registered types.
"""
