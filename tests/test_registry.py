"""One way to register a pluggable kind: errors that list the valid kinds, replacing an entry,
the order entries were added in, and the discriminated union of the kinds' config classes."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import AfterValidator, BaseModel, TypeAdapter, ValidationError

from factory.errors import UsageError
from factory.registry import UNKNOWN_KIND, Registry


def shapes() -> Registry[str]:
    shapes: Registry[str] = Registry("shape")
    shapes.add("square", "four sides")
    shapes.add("circle", "no corner")
    shapes.add("triangle", "three sides")
    return shapes


def test_an_unknown_kind_is_a_usage_error_listing_the_valid_ones():
    with pytest.raises(UsageError, match=r"^unknown shape 'hexagon'; valid: circle, square, triangle$"):
        shapes().get("hexagon")
    assert shapes().get("circle") == "no corner"


def test_a_config_field_naming_a_kind_is_refused_with_the_same_words():
    registry = shapes()

    class Drawing(BaseModel):
        shape: Annotated[str, AfterValidator(registry.check)]

    assert Drawing(shape="square").shape == "square"
    with pytest.raises(ValidationError) as caught:
        Drawing(shape="{hexagon}")  # braces in the input are not a format template
    [error] = caught.value.errors()
    assert error["type"] == UNKNOWN_KIND and error["loc"] == ("shape",)
    assert error["msg"] == "unknown shape '{hexagon}'; valid: circle, square, triangle"


def test_adding_a_kind_again_replaces_it_in_its_place():
    registry = shapes()
    registry.add("circle", "round")

    assert registry.get("circle") == "round"
    assert list(registry) == ["square", "circle", "triangle"] and len(registry) == 3


def test_entries_keep_the_order_they_were_added_in_and_kinds_are_sorted():
    registry = shapes()

    assert list(registry) == ["square", "circle", "triangle"]
    assert registry.items() == [("square", "four sides"), ("circle", "no corner"), ("triangle", "three sides")]
    assert registry.values() == ["four sides", "no corner", "three sides"]
    assert registry.kinds() == ["circle", "square", "triangle"]
    assert "circle" in registry and "hexagon" not in registry


def test_a_copy_takes_new_kinds_without_changing_the_original():
    registry = shapes()
    copy = registry.copy()
    copy.add("hexagon", "six sides")

    assert "hexagon" in copy and "hexagon" not in registry
    assert copy.what == "shape"


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float


def test_the_union_picks_the_config_class_by_kind_and_rejects_the_rest():
    registry: Registry[type[BaseModel]] = Registry("shape")
    registry.add("square", Square)
    registry.add("circle", Circle)
    adapter = TypeAdapter(list[registry.union(lambda cls: cls)])

    parsed = adapter.validate_python([{"kind": "circle", "radius": 1}, {"kind": "square", "side": 2}])
    assert parsed == [Circle(radius=1), Square(side=2)]
    with pytest.raises(ValidationError, match="'square', 'circle'") as caught:
        adapter.validate_python([{"kind": "hexagon", "side": 1}])
    assert caught.value.errors()[0]["type"] == "union_tag_invalid"
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python([{"kind": "circle", "side": 1}])  # a square's field on a circle
    assert [e["loc"] for e in caught.value.errors()] == [(0, "circle", "radius")]


def test_the_union_of_one_kind_is_its_class_and_of_none_an_error():
    registry: Registry[tuple[type[BaseModel], str]] = Registry("shape")
    with pytest.raises(UsageError, match="no shape is registered"):
        registry.union(lambda entry: entry[0])
    registry.add("square", (Square, "four sides"))
    registry.add("box", (Square, "the same class again"))

    assert registry.union(lambda entry: entry[0]) is Square
