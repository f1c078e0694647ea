"""Names of the per-user histogram experiments. Light: the workflow imports them while parsing
(through :mod:`shuffledp.stages.peruser`)."""

METHODS = ("alg1", "alg1T", "ldp", "global", "oracle", "single")
CLUSTERED = ("alg1", "alg1T")          # methods with an eps1 split and a shuffler-side clustering
METHOD_LABELS = {
    "alg1": "Algorithm 1", "alg1T": "Algorithm 1 (release T)", "ldp": "Laplace LDP (whole eps)",
    "global": "global shuffle", "oracle": "true-histogram clusters (NON-PRIVATE upper bound)",
    "single": "single copy (Alg. 2)",
}
