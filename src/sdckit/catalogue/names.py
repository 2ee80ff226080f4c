"""The catalogue files of a release, by format (what ``[output] catalogue`` names)."""

#: catalogue format -> the file it writes in the public folder of a microdata release
CATALOGUE_FILES = {"ddi": "codebook.xml", "frictionless": "datapackage.json", "satre": "satre_record.json"}
#: every format, in the order written (the default of ``[output] catalogue``)
CATALOGUE_FORMATS = tuple(CATALOGUE_FILES)
#: catalogue format -> the files it writes in the public folder of a table release (SDMX: the
#: SDMX-CSV 2.0 data and its SDMX-ML 2.1 structure)
TABLE_CATALOGUE_FILES = {"sdmx": ("sdmx_data.csv", "sdmx_structure.xml"), "frictionless": ("datapackage.json",),
                         "satre": ("satre_record.json",)}
#: every table format, in the order written (the default of a table spec's ``[output] catalogue``)
TABLE_CATALOGUE_FORMATS = tuple(TABLE_CATALOGUE_FILES)
