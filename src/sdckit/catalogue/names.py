"""The catalogue files of a microdata release, by format (what ``[output] catalogue`` names)."""

#: catalogue format -> the file it writes in the public folder
CATALOGUE_FILES = {"ddi": "codebook.xml", "frictionless": "datapackage.json", "satre": "satre_record.json"}
#: every format, in the order written (the default of ``[output] catalogue``)
CATALOGUE_FORMATS = tuple(CATALOGUE_FILES)
