"""Tests for derive_schema.py. Run: cd libs/agents/src/python-tools && python3 -m unittest test_derive_schema"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
from derive_schema import derive  # noqa: E402

SCRIPT = Path(__file__).with_name("derive_schema.py")


def derive_text(source: str) -> dict:
    return derive(textwrap.dedent(source))


def only_function(source: str) -> dict:
    result = derive_text(source)
    assert result["errors"] == [], result["errors"]
    assert len(result["functions"]) == 1, result["functions"]
    return result["functions"][0]


def prop(source: str, name: str = "x") -> dict:
    return only_function(source)["parameters"]["properties"][name]


class TypeMappingTest(unittest.TestCase):
    def test_maps_each_annotation_to_json_schema(self) -> None:
        cases = [
            ("str", {"type": "string"}),
            ("int", {"type": "integer"}),
            ("float", {"type": "number"}),
            ("bool", {"type": "boolean"}),
            ("list", {"type": "array"}),
            ("list[int]", {"type": "array", "items": {"type": "integer"}}),
            ("List[str]", {"type": "array", "items": {"type": "string"}}),
            ("typing.List[str]", {"type": "array", "items": {"type": "string"}}),
            ("set[str]", {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
            ("dict", {"type": "object"}),
            ("dict[str, int]", {"type": "object", "additionalProperties": {"type": "integer"}}),
            ("Dict[str, Any]", {"type": "object"}),
            ("Optional[int]", {"type": ["integer", "null"]}),
            ("int | None", {"type": ["integer", "null"]}),
            ("Union[int, str]", {"type": ["integer", "string"]}),
            ("Literal['a', 'b']", {"type": "string", "enum": ["a", "b"]}),
            ("Literal[1, 'b']", {"enum": [1, "b"]}),
            ("tuple[int, str]", {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                                 "minItems": 2, "maxItems": 2}),
            ("tuple[float, ...]", {"type": "array", "items": {"type": "number"}}),
            ("Any", {}),
            ("pd.DataFrame", {}),
            ("'list[int]'", {"type": "array", "items": {"type": "integer"}}),
            ("Annotated[int, 'how many']", {"type": "integer", "description": "how many"}),
            ("Optional[list[int]]", {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]}),
        ]
        for annotation, expected in cases:
            with self.subTest(annotation=annotation):
                source = f"""
                    import typing
                    from typing import Annotated, Any, Dict, List, Literal, Optional, Union
                    def f(x: {annotation}):
                        pass
                """
                self.assertEqual(prop(source), expected)

    def test_an_unannotated_parameter_accepts_anything(self) -> None:
        self.assertEqual(prop("def f(x): pass"), {})

    def test_follows_aliased_typing_imports(self) -> None:
        source = """
            import typing as t
            from typing import Optional as Opt
            def f(x: t.List[int], y: Opt[str]): pass
        """
        props = only_function(source)["parameters"]["properties"]
        self.assertEqual(props["x"], {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(props["y"], {"type": ["string", "null"]})


class DefaultsTest(unittest.TestCase):
    def test_parameters_with_defaults_are_optional_and_carry_the_default(self) -> None:
        fn = only_function("""
            def f(a: str, b: int = 3, c: tuple[int, int] = (1, 2), *, d: bool = False, e: float):
                pass
        """)
        props = fn["parameters"]["properties"]
        self.assertEqual(fn["required"], ["a", "e"])
        self.assertEqual(fn["parameters"]["required"], ["a", "e"])
        self.assertFalse(fn["parameters"]["additionalProperties"])
        self.assertEqual(props["b"], {"type": "integer", "default": 3})
        self.assertEqual(props["c"]["default"], [1, 2])
        self.assertEqual(props["d"], {"type": "boolean", "default": False})
        self.assertNotIn("default", props["e"])

    def test_a_default_that_is_not_a_literal_is_optional_without_a_default(self) -> None:
        fn = only_function("""
            LIMIT = 10
            def f(x: int = LIMIT, y: bytes = b"raw", z: float = float("nan")): pass
        """)
        self.assertEqual(fn["required"], [])
        for name in ("x", "y", "z"):
            self.assertNotIn("default", fn["parameters"]["properties"][name])

    def test_a_none_default_admits_null(self) -> None:
        self.assertEqual(prop("def f(x: str = None): pass"), {"type": ["string", "null"], "default": None})
        self.assertEqual(prop("def f(x: Optional[str] = None): pass"), {"type": ["string", "null"], "default": None})

    def test_output_is_json(self) -> None:
        result = derive_text("def f(x: dict = {'a': [1, 2.5, None, True]}): pass")
        self.assertEqual(json.loads(json.dumps(result)), result)


class DocstringTest(unittest.TestCase):
    def test_google_style(self) -> None:
        fn = only_function('''
            def forecast(city: str, days: int = 3, units="metric"):
                """Forecast the weather
                for a city.

                Longer text that is not part of the description.

                Args:
                    city: The city, e.g.
                        "Paris".
                    days (int): How many days ahead.
                    units (str, optional): Metric or imperial.

                Returns:
                    A forecast.
                """
        ''')
        props = fn["parameters"]["properties"]
        self.assertEqual(fn["description"], "Forecast the weather for a city.")
        self.assertEqual(props["city"]["description"], 'The city, e.g. "Paris".')
        self.assertEqual(props["days"]["description"], "How many days ahead.")
        # A documented type stands in for a missing annotation.
        self.assertEqual(props["units"], {"type": "string", "description": "Metric or imperial.", "default": "metric"})

    def test_rest_style(self) -> None:
        fn = only_function('''
            def f(path, limit=5):
                """Read a file.
                :param path: Where the file is,
                    relative to the root.
                :type path: str
                :param int limit: At most this many lines.
                :returns: The text.
                """
        ''')
        props = fn["parameters"]["properties"]
        self.assertEqual(fn["description"], "Read a file.")
        self.assertEqual(props["path"], {"type": "string", "description": "Where the file is, relative to the root."})
        self.assertEqual(props["limit"], {"type": "integer", "description": "At most this many lines.", "default": 5})

    def test_numpy_style(self) -> None:
        fn = only_function('''
            def f(values, scale=1.0):
                """Scale values.

                Parameters
                ----------
                values : list[float]
                    The numbers
                    to scale.
                scale : float, optional
                    The factor.

                Returns
                -------
                list[float]
                    Scaled.
                """
        ''')
        props = fn["parameters"]["properties"]
        self.assertEqual(fn["description"], "Scale values.")
        self.assertEqual(props["values"], {"type": "array", "items": {"type": "number"}, "description": "The numbers to scale."})
        self.assertEqual(props["scale"], {"type": "number", "description": "The factor.", "default": 1.0})

    def test_no_docstring_gives_an_empty_description(self) -> None:
        self.assertEqual(only_function("def f(): pass")["description"], "")


class SelectionTest(unittest.TestCase):
    def test_private_helpers_and_nested_definitions_are_not_tools(self) -> None:
        result = derive_text("""
            def _helper(x):
                return x * 2

            class Thing:
                def method(self): pass

            def outer(x: int) -> int:
                def inner(): pass
                return _helper(x)

            if True:
                def conditional(): pass
        """)
        self.assertEqual([f["name"] for f in result["functions"]], ["outer"])
        self.assertEqual(result["errors"], [])

    def test_async_functions_are_tools(self) -> None:
        self.assertEqual(only_function("async def fetch(url: str): pass")["name"], "fetch")

    def test_the_last_definition_of_a_name_wins(self) -> None:
        fn = only_function("def f(a): pass\ndef f(b: int): pass\n")
        self.assertEqual(list(fn["parameters"]["properties"]), ["b"])

    def test_imports_are_not_performed(self) -> None:
        result = derive_text("""
            import numpy as np
            import module_that_does_not_exist
            from pandas import DataFrame
            raise SystemExit("module body ran")

            def mean(values: list[float]) -> float:
                return float(np.mean(values))
        """)
        self.assertEqual([f["name"] for f in result["functions"]], ["mean"])
        self.assertNotIn("module_that_does_not_exist", sys.modules)


class RefusalTest(unittest.TestCase):
    def test_varargs_kwargs_and_positional_only_are_refused_per_function(self) -> None:
        result = derive_text("""
            def ok(a: int): pass
            def star(*values): pass
            def double_star(a, **options): pass
            def positional(a, /, b): pass
        """)
        self.assertEqual([f["name"] for f in result["functions"]], ["ok"])
        self.assertEqual(
            [(e["code"], e["function"], e["line"]) for e in result["errors"]],
            [
                ("VARARGS_NOT_SUPPORTED", "star", 3),
                ("VARARGS_NOT_SUPPORTED", "double_star", 4),
                ("POSITIONAL_ONLY_NOT_SUPPORTED", "positional", 5),
            ],
        )
        self.assertIn("*values", result["errors"][0]["message"])
        self.assertIn("**options", result["errors"][1]["message"])

    def test_a_non_ascii_name_is_refused(self) -> None:
        result = derive_text("def größe(): pass")
        self.assertEqual(result["functions"], [])
        self.assertEqual(result["errors"][0]["code"], "INVALID_TOOL_NAME")

    def test_a_syntax_error_gives_its_line(self) -> None:
        result = derive_text("""
            def fine(): pass

            def broken(:
                pass
        """)
        self.assertEqual(result["functions"], [])
        [error] = result["errors"]
        self.assertEqual((error["code"], error["line"], error["function"]), ("SYNTAX_ERROR", 4, None))
        self.assertIn("line 4", error["message"])

    def test_null_bytes_are_a_syntax_error(self) -> None:
        self.assertEqual(derive("x = 1\0")["errors"][0]["code"], "SYNTAX_ERROR")


class CommandLineTest(unittest.TestCase):
    def run_script(self, stdin: str) -> tuple[int, dict]:
        done = subprocess.run([sys.executable, str(SCRIPT)], input=stdin, capture_output=True, text=True, timeout=30)
        return done.returncode, json.loads(done.stdout)

    def test_reads_json_from_stdin(self) -> None:
        code, result = self.run_script(json.dumps({"source": "def f(x: int):\n    'Do it.'\n"}))
        self.assertEqual(code, 0)
        self.assertEqual(result["functions"][0]["description"], "Do it.")

    def test_refuses_input_that_is_not_a_source_object(self) -> None:
        for stdin in ("not json", json.dumps({"source": 3}), "[]"):
            with self.subTest(stdin=stdin):
                code, result = self.run_script(stdin)
                self.assertEqual(code, 2)
                self.assertEqual(result["errors"][0]["code"], "INVALID_INPUT")


if __name__ == "__main__":
    unittest.main()
