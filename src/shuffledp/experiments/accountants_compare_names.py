"""The bounds the accountant comparison evaluates. Light: the workflow imports them while parsing
(through :mod:`shuffledp.stages.accountants_compare`)."""

BOUNDS = ("decomposition", "variation-ratio", "fmt21", "fmt23", "fmt21-closed-form",
          "blanket-hoeffding", "blanket-bennett", "hps-uniform", "ccc", "lzx", "lower", "exact")
