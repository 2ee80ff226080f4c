"""The environment's rules: ACRO's defaults, a TOML override (sdckit's or ACRO's names), errors."""

import pytest

from sdckit.errors import InputError, ParameterError
from sdckit.outputs import OutputRules, load_rules

# ACRO 1.0.2, acro/default.yaml (read from AI-SDC/ACRO): safe_threshold 10, safe_dof_threshold 10,
# safe_nk_n 2, safe_nk_k 0.90, safe_pratio_p 0.10, check_missing_values False,
# survival_safe_threshold 10, zeros_are_disclosive True
ACRO_DEFAULTS = {"safe_threshold": 10, "safe_dof_threshold": 10, "safe_nk_n": 2, "safe_nk_k": 0.9,
                 "safe_pratio_p": 0.1, "check_missing_values": False, "survival_safe_threshold": 10,
                 "zeros_are_disclosive": True}


def test_defaults_are_acro_defaults():
    assert OutputRules().acro_config() == ACRO_DEFAULTS


def test_toml_overrides_with_either_name(tmp_path):
    p = tmp_path / "rules.toml"
    p.write_text("[rules]\nsafe_threshold = 5\ndof_threshold = 20\nzeros_are_disclosive = false\n")
    r = load_rules(p)
    assert (r.threshold, r.dof_threshold, r.zeros_are_disclosive, r.nk_n) == (5, 20, False, 2)


def test_bad_value_uses_the_template_and_names_the_file(tmp_path):
    p = tmp_path / "env.toml"
    p.write_text("threshold = 0\n")
    with pytest.raises(ParameterError, match=r"^env.toml: The 'threshold' parameter of OutputRules must be an int >= 1\. "
                                             r"Got 0\.$"):
        load_rules(p)
    with pytest.raises(ParameterError, match="'nk_k' parameter of OutputRules must be a number in \\(0, 1\\]. Got 1.5."):
        OutputRules(nk_k=1.5)


def test_unknown_rule_is_named(tmp_path):
    p = tmp_path / "env.toml"
    p.write_text("threshhold = 3\n")
    with pytest.raises(InputError, match=r"env.toml: unknown rule 'threshhold' \(did you mean 'threshold'\?\)"):
        load_rules(p)
    with pytest.raises(InputError, match="no such rules file"):
        load_rules(tmp_path / "missing.toml")
