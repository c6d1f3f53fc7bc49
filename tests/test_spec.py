import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shredfold.resolve import load_spec
from shredfold.spec import SpecError, json_schemas

GOOD = """\
name: t
seed: 1
shred:
  domains: [news_en, table]
  granularities: [1, 8]
  documents_per_domain: 2
models:
  - oracle
  - ocr-islands
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(SpecError) as exc:
        load_spec(write(tmp_path, text))
    return str(exc.value)


def test_shipped_specs_load(repo_root):
    default = load_spec(repo_root / "specs" / "default.yaml")
    assert [m.id for m in default.models][:3] == ["oracle", "ocr-islands", "jigsaw-ocr"]
    assert default.models[0].reference
    paper = load_spec(repo_root / "specs" / "paper.yaml")
    assert sorted(paper.spec.shred.granularities) == [1, 8, 12, 16]
    assert len(paper.spec.shred.domains) == 6
    api = [m for m in paper.models if m.adapter == "openai"]
    assert len(api) == 14
    assert all(m.api_key_env for m in api)


def test_a_good_spec_resolves_builtin_models(tmp_path):
    r = load_spec(write(tmp_path, GOOD))
    assert r.spec.shred.render_for("table").width == 1600
    assert [m.adapter for m in r.models] == ["oracle", "ocr-islands"]


def test_unknown_field_names_path_and_line(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  documents_per_domain: 2", "  documents_per_domain: 2\n  colour: red"))
    assert "shred.colour" in msg and "unknown field" in msg and ":7:" in msg


def test_bad_type_names_the_field(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("seed: 1", "seed: lots"))
    assert "seed" in msg and ":2:" in msg


def test_granularity_below_one_is_refused(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("[1, 8]", "[1, 0]"))
    assert "shred.granularities[1]" in msg and "greater than or equal to 1" in msg


def test_unknown_domain_is_refused(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("[news_en, table]", "[news_en, poetry]"))
    assert "shred.domains[1]" in msg and "poetry" in msg


def test_missing_corpus_folder_is_refused(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  documents_per_domain: 2", "  documents_per_domain: 2\n  corpus:\n    folder: nowhere"))
    assert "shred.corpus.folder" in msg and "does not exist" in msg


def test_unknown_model_reference_is_refused(tmp_path):
    msg = error_of(tmp_path, GOOD.replace("  - ocr-islands", "  - gpt-9"))
    assert "models[1]" in msg and "gpt-9" in msg


def test_model_file_errors_name_the_model_file(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mine.yaml").write_text("id: mine\nadapter: openai\nmodel: x\n")
    msg = error_of(tmp_path, GOOD.replace("  - ocr-islands", "  - mine"))
    assert "mine.yaml" in msg and "base_url" in msg


def test_missing_spec_file():
    with pytest.raises(SpecError, match="file not found"):
        load_spec("/nonexistent/spec.yaml")


def test_per_domain_render_override(tmp_path):
    text = GOOD.replace("models:", "  render_by_domain:\n    table:\n      table_font_size: 20\nmodels:")
    r = load_spec(write(tmp_path, text))
    assert r.spec.shred.render_for("table").table_font_size == 20
    assert r.spec.shred.render_for("news_en").table_font_size == 26


def test_schemas_in_repo_match_the_models(repo_root):
    for name, schema in json_schemas().items():
        stored = json.loads((repo_root / "schemas" / name).read_text())
        assert stored == schema, f"schemas/{name} is stale: run `shredfold schema`"


def test_a_spec_caps_a_models_budget_and_the_stricter_cap_holds(tmp_path):
    (tmp_path / "models").mkdir()
    for name, budget in (("api-a", 5.0), ("api-b", 1.0), ("api-c", None)):
        body = f"id: {name}\nbase_url: http://127.0.0.1:1/v1\nmodel: m\n"
        (tmp_path / "models" / f"{name}.yaml").write_text(body + (f"budget_usd: {budget}\n" if budget else ""))
    spec = GOOD.replace("  - ocr-islands", "  - api-a\n  - api-b\n  - api-c")
    resolved = load_spec(write(tmp_path, spec + "budget_usd: {api-a: 2.0, api-b: 3.0, api-c: 0.5}\n"))
    assert {m.id: m.budget_usd for m in resolved.models} == {
        "oracle": None, "api-a": 2.0, "api-b": 1.0, "api-c": 0.5,
    }
    msg = error_of(tmp_path, spec + "budget_usd:\n  gpt-9: 1.0\n")
    assert "spec.yaml:13: budget_usd.gpt-9: not a model of this spec" in msg


def test_an_image_token_rule_error_names_its_field_and_line(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mine.yaml").write_text(
        "id: mine\nbase_url: http://127.0.0.1:1/v1\nmodel: x\nimage_tokens:\n  rule: openai-tiles\n  tile: 0\n"
    )
    msg = error_of(tmp_path, GOOD.replace("  - ocr-islands", "  - mine"))
    assert "mine.yaml:6: image_tokens.tile: Input should be greater than or equal to 1" in msg


# ---------------------------------------------------------------- YAML alias bombs

BOMB = "\n".join(
    ["lol: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
)  # nine levels of nine: 9^9 strings once expanded

# Under a memory cap a spec that expands its aliases dies of MemoryError (or takes minutes
# without one); one that is refused first finishes in the time it takes to import.
CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (600 * 2**20, 600 * 2**20))
from shredfold.cli import main
sys.exit(main(["plan", sys.argv[1]]))
"""


def plan_capped(spec: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CAPPED, str(spec)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("where", ["spec", "model file extra_body"])
def test_an_alias_bomb_is_refused_in_one_line_before_it_expands(tmp_path, where):
    if where == "spec":
        spec = write(tmp_path, GOOD + BOMB + "\n")
        at = "spec.yaml:15: l5"  # the first entry that is too large once expanded
    else:
        (tmp_path / "models").mkdir()
        body = "id: mine\nbase_url: http://127.0.0.1:1/v1\nmodel: x\nextra_body:\n" + textwrap.indent(BOMB, "  ")
        (tmp_path / "models" / "mine.yaml").write_text(body + "\n")
        spec = write(tmp_path, GOOD.replace("  - ocr-islands", "  - mine"))
        at = "mine.yaml:4: extra_body"
    proc = plan_capped(spec)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert at in proc.stderr and "aliases that expand to more than 100,000 nodes" in proc.stderr


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path):
    msg = error_of(tmp_path, GOOD + "loop: &me [1, *me]\n")
    assert "spec.yaml:10: not valid YAML: an alias refers to a node that contains it" in msg


def test_aliases_within_the_bound_still_work(tmp_path):
    text = GOOD.replace("  granularities: [1, 8]", "  granularities: &g [1, 8]") + "description: &d shared\n"
    assert load_spec(write(tmp_path, text)).spec.shred.granularities == [1, 8]


# ---------------------------------------------------------------- where API keys go


def shared_model(tmp_path, env, url="https://api.example.com/v1", name="shared"):
    (tmp_path / "models").mkdir(exist_ok=True)
    (tmp_path / "models" / f"{name}.yaml").write_text(f"id: {name}\nbase_url: {url}\nmodel: m\napi_key_env: {env}\n")
    return GOOD.replace("  - ocr-islands", f"  - {name}")


@pytest.mark.parametrize(
    ("env", "url", "why"),
    [
        ("AWS_SECRET_ACCESS_KEY", "http://169.254.169.254/v1",
         "$AWS_SECRET_ACCESS_KEY is not named like an API key (…API_KEY); 169.254.169.254 is a cloud metadata service"),
        ("PATH", "https://api.example.com/v1", "$PATH is not named like an API key"),
        ("OPENAI_API_KEY", "http://10.0.0.5:8000/v1", "10.0.0.5:8000 is a private address"),
        ("OPENAI_API_KEY", "http://[fe80::1]/v1", "[fe80::1] is a link-local address"),
        ("OPENAI_API_KEY", "http://metadata.google.internal/v1", "is a cloud metadata service"),
    ],
)
def test_a_shared_model_file_cannot_send_a_secret_unseen(tmp_path, env, url, why):
    msg = error_of(tmp_path, shared_model(tmp_path, env, url))
    assert "spec.yaml:9: models[1]: shared would send $" + env in msg and why in msg and "refused" in msg
    assert "allow_keys: {shared: {env: " + env in msg  # how to opt in, exactly


def test_the_spec_opts_in_to_exactly_one_variable_and_host(tmp_path):
    spec = shared_model(tmp_path, "LAB_TOKEN", "http://10.0.0.5:8000/v1")
    resolved = load_spec(write(tmp_path, spec + "allow_keys:\n  shared: {env: LAB_TOKEN, host: '10.0.0.5:8000'}\n"))
    assert resolved.models[1].api_key_env == "LAB_TOKEN"
    # the model file changed its host since: the opt-in no longer covers it
    msg = error_of(tmp_path, spec + "allow_keys:\n  shared: {env: LAB_TOKEN, host: '10.0.0.6:8000'}\n")
    assert "spec.yaml:11: allow_keys.shared: allows $LAB_TOKEN -> 10.0.0.6:8000, but the model sends $LAB_TOKEN -> 10.0.0.5:8000" in msg
    msg = error_of(tmp_path, GOOD + "allow_keys:\n  gone: {env: X_API_KEY, host: example.com}\n")
    assert "allow_keys.gone: no model of this spec sends a variable by that id" in msg
    # an API key to a public host, or any key to this machine, needs nothing
    assert load_spec(write(tmp_path, shared_model(tmp_path, "OPENAI_API_KEY")))
    assert load_spec(write(tmp_path, shared_model(tmp_path, "OPENAI_API_KEY", "http://127.0.0.1:8000/v1")))


def test_plan_and_plan_cost_show_which_variable_goes_to_which_host(tmp_path, capsys):
    from shredfold.cli import main

    spec = write(tmp_path, shared_model(tmp_path, "LAB_TOKEN", "http://10.0.0.5:8000/v1")
                 + "allow_keys:\n  shared: {env: LAB_TOKEN, host: '10.0.0.5:8000'}\n")  # fmt: skip
    line = "shared: $LAB_TOKEN -> 10.0.0.5:8000  (opted in: $LAB_TOKEN is not named like an API key (…API_KEY); 10.0.0.5:8000 is a private address)"
    assert main(["plan", str(spec)]) == 0
    assert f"  key  {line}" in capsys.readouterr().out.splitlines()
    assert main(["plan", str(spec), "--cost"]) == 0
    assert f"  {line}" in capsys.readouterr().out.splitlines()
    for args in (["--json"], ["--cost", "--json"]):
        assert main(["plan", str(spec), *args]) == 0
        (route,) = json.loads(capsys.readouterr().out)["keys"]
        assert (route["model"], route["env"], route["host"]) == ("shared", "LAB_TOKEN", "10.0.0.5:8000")
