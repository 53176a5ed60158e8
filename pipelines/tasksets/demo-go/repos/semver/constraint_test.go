package semver

import "testing"

func TestConstraintCheck(t *testing.T) {
	cases := []struct {
		name, constraint string
		yes, no          []string
	}{
		{"exact", "1.2.3", []string{"1.2.3"}, []string{"1.2.4", "1.2.2"}},
		{"range", ">=1.2.0 <2.0.0", []string{"1.2.0", "1.9.9"}, []string{"1.1.9", "2.0.0"}},
		{"caret", "^1.2.3", []string{"1.2.3", "1.9.0"}, []string{"1.2.2", "2.0.0"}},
		{"caret zero major", "^0.2.3", []string{"0.2.3", "0.2.9"}, []string{"0.3.0", "0.2.2"}},
		{"caret zero minor", "^0.0.3", []string{"0.0.3"}, []string{"0.0.4", "0.1.0"}},
		{"caret partial", "^0.0", []string{"0.0.0", "0.0.9"}, []string{"0.1.0"}},
		{"tilde", "~1.2.3", []string{"1.2.3", "1.2.9"}, []string{"1.3.0", "1.2.2"}},
		{"tilde major", "~1", []string{"1.0.0", "1.9.0"}, []string{"2.0.0"}},
		{"x range", "1.x", []string{"1.0.0", "1.5.2"}, []string{"2.0.0", "0.9.0"}},
		{"minor x range", "1.2.x", []string{"1.2.0", "1.2.7"}, []string{"1.3.0"}},
		{"star", "*", []string{"0.0.0", "9.9.9"}, nil},
		{"greater partial", ">1.2", []string{"1.3.0"}, []string{"1.2.9"}},
		{"at most partial", "<=1.2", []string{"1.2.9"}, []string{"1.3.0"}},
		{"hyphen", "1.2.3 - 2.3.4", []string{"1.2.3", "2.3.4"}, []string{"2.3.5", "1.2.2"}},
		{"hyphen partial high", "1.2.3 - 2.3", []string{"2.3.9"}, []string{"2.4.0"}},
		{"or", "^1.2.0 || >=3.0.0", []string{"1.4.0", "3.1.0"}, []string{"2.0.0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			con, err := ParseConstraint(c.constraint)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.yes {
				if !con.Check(MustParse(s)) {
					t.Errorf("%q should allow %s", c.constraint, s)
				}
			}
			for _, s := range c.no {
				if con.Check(MustParse(s)) {
					t.Errorf("%q should not allow %s", c.constraint, s)
				}
			}
		})
	}
}

func TestPreReleasesExcludedByDefault(t *testing.T) {
	con, _ := ParseConstraint("^1.2.0")
	for _, s := range []string{"1.3.0-beta", "1.2.5-rc.1"} {
		if con.Check(MustParse(s)) {
			t.Errorf("^1.2.0 should not allow pre-release %s", s)
		}
	}
}

func TestPreReleaseNamedInRange(t *testing.T) {
	con, err := ParseConstraint(">=1.2.3-beta.2 <1.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if !con.Check(MustParse("1.2.3-beta.4")) {
		t.Error("should allow 1.2.3-beta.4")
	}
	if con.Check(MustParse("1.2.4-beta.1")) {
		t.Error("should not allow 1.2.4-beta.1")
	}
	if !con.Check(MustParse("1.2.9")) {
		t.Error("should allow 1.2.9")
	}
}

func TestInvalidConstraint(t *testing.T) {
	for _, s := range []string{"1.2.3.4", ">=a.b", "^01.2"} {
		if _, err := ParseConstraint(s); err == nil {
			t.Errorf("ParseConstraint(%q) succeeded", s)
		}
	}
}

func TestMax(t *testing.T) {
	vs := []Version{MustParse("1.2.0"), MustParse("1.4.1"), MustParse("2.0.0"), MustParse("1.5.0-rc.1")}
	con, _ := ParseConstraint("^1.0.0")
	got, ok := con.Max(vs)
	if !ok || got.String() != "1.4.1" {
		t.Fatalf("Max = %v, %v; want 1.4.1", got, ok)
	}
	none, _ := ParseConstraint(">=3.0.0")
	if _, ok := none.Max(vs); ok {
		t.Fatal("Max found a version above 3.0.0")
	}
}
