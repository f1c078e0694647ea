"""Adult's public record layout: column names, the category lists of ``adult.names`` and which
attributes are ordinal. Constants only (a leaf module): the loaders (:mod:`shuffledp.datasets.adult`,
:mod:`shuffledp.datasets.adult_ordinal`) and the public coding (:mod:`shuffledp.datasets.coding`) all read
them from here.
"""

COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
    "income",
]
CATEGORIES = {
    "workclass": "Private Self-emp-not-inc Self-emp-inc Federal-gov Local-gov State-gov Without-pay "
    "Never-worked ?",
    "education": "Preschool 1st-4th 5th-6th 7th-8th 9th 10th 11th 12th HS-grad Some-college Assoc-voc "
    "Assoc-acdm Bachelors Masters Prof-school Doctorate",
    "marital_status": "Married-civ-spouse Divorced Never-married Separated Widowed Married-spouse-absent "
    "Married-AF-spouse",
    "occupation": "Tech-support Craft-repair Other-service Sales Exec-managerial Prof-specialty "
    "Handlers-cleaners Machine-op-inspct Adm-clerical Farming-fishing Transport-moving Priv-house-serv "
    "Protective-serv Armed-Forces ?",
    "relationship": "Wife Own-child Husband Not-in-family Other-relative Unmarried",
    "race": "White Asian-Pac-Islander Amer-Indian-Eskimo Other Black",
    "sex": "Female Male",
    "native_country": "United-States Cambodia England Puerto-Rico Canada Germany "
    "Outlying-US(Guam-USVI-etc) India Japan Greece South China Cuba Iran Honduras Philippines Italy "
    "Poland Jamaica Vietnam Mexico Portugal Ireland France Dominican-Republic Laos Ecuador Taiwan Haiti "
    "Columbia Hungary Guatemala Nicaragua Scotland Thailand Yugoslavia El-Salvador Trinadad&Tobago Peru "
    "Hong Holand-Netherlands ?",
    "income": "<=50K >50K",
}
ORDINAL = ["age", "education_num", "hours_per_week", "fnlwgt", "capital_gain", "capital_loss"]
# the five ordinal attributes HDG and CALM read (:mod:`shuffledp.datasets.adult_ordinal`)
ATTRIBUTES = ["age", "fnlwgt", "education_num", "capital_gain", "hours_per_week"]
