package semver

import (
	"errors"
	"sort"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain", "1.2.3", "1.2.3"},
		{"v prefix", "v1.2.3", "1.2.3"},
		{"spaces", "  0.4.0 ", "0.4.0"},
		{"pre-release", "1.0.0-alpha.1", "1.0.0-alpha.1"},
		{"build", "1.0.0+20130313144700", "1.0.0+20130313144700"},
		{"pre and build", "1.0.0-beta+exp.sha.5114f85", "1.0.0-beta+exp.sha.5114f85"},
		{"hyphen in pre", "1.0.0-x-y-z.--", "1.0.0-x-y-z.--"},
		{"zero", "0.0.0", "0.0.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Parse(c.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.in, err)
			}
			if got := v.String(); got != c.want {
				t.Errorf("Parse(%q).String() = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	for _, in := range []string{"", "1", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.-3", "1.2.3-", "1.2.3-01", "1.2.3-a..b", "1.2.3+", "1.2.3+a_b", "a.b.c"} {
		t.Run(strings.ReplaceAll(in, ".", "_"), func(t *testing.T) {
			_, err := Parse(in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", in)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) error %v does not wrap ErrInvalid", in, err)
			}
		})
	}
}

func TestBuildMetadataKeptInString(t *testing.T) {
	v := MustParse("1.2.3-rc.1+linux.amd64")
	if len(v.Build) != 2 || v.Build[0] != "linux" || v.Build[1] != "amd64" {
		t.Fatalf("Build = %v", v.Build)
	}
	if len(v.Pre) != 2 || v.Pre[1] != "1" {
		t.Fatalf("Pre = %v", v.Pre)
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       int
	}{
		{"equal", "1.2.3", "1.2.3", 0},
		{"major", "2.0.0", "1.9.9", 1},
		{"minor", "1.10.0", "1.9.0", 1},
		{"patch", "1.2.3", "1.2.4", -1},
		{"release above pre", "1.0.0", "1.0.0-rc.1", 1},
		{"pre below release", "1.0.0-rc.1", "1.0.0", -1},
		{"numeric ids", "1.0.0-alpha.2", "1.0.0-alpha.10", -1},
		{"numeric below alpha", "1.0.0-1", "1.0.0-alpha", -1},
		{"longer pre wins", "1.0.0-alpha.1", "1.0.0-alpha", 1},
		{"lexical ids", "1.0.0-beta", "1.0.0-alpha", 1},
		{"build ignored", "1.0.0+a", "1.0.0+b", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := MustParse(c.a).Compare(MustParse(c.b)); got != c.want {
				t.Errorf("Compare(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestSortSpecOrder(t *testing.T) {
	// the precedence example of the SemVer 2.0.0 spec, shuffled
	want := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"}
	in := []string{"1.0.0-beta.11", "1.0.0", "1.0.0-alpha.beta", "1.0.0-rc.1", "1.0.0-alpha", "1.0.0-beta.2", "1.0.0-alpha.1", "1.0.0-beta"}
	vs := make([]Version, len(in))
	for i, s := range in {
		vs[i] = MustParse(s)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Less(vs[j]) })
	for i, v := range vs {
		if v.String() != want[i] {
			t.Fatalf("position %d: %s, want %s", i, v, want[i])
		}
	}
}

func TestBump(t *testing.T) {
	cases := []struct {
		name, in, kind, want string
	}{
		{"patch", "1.2.3", "patch", "1.2.4"},
		{"minor", "1.2.3", "minor", "1.3.0"},
		{"major", "1.2.3", "major", "2.0.0"},
		{"patch releases pre", "1.2.4-rc.1", "patch", "1.2.4"},
		{"minor releases pre", "1.3.0-rc.1", "minor", "1.3.0"},
		{"minor of patch pre", "1.2.4-rc.1", "minor", "1.3.0"},
		{"major releases pre", "2.0.0-beta", "major", "2.0.0"},
		{"major of minor pre", "1.3.0-beta", "major", "2.0.0"},
		{"drops build", "1.2.3+b7", "patch", "1.2.4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := MustParse(c.in).Bump(c.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.want {
				t.Errorf("Bump(%s, %s) = %s, want %s", c.in, c.kind, got, c.want)
			}
		})
	}
}

func TestBumpUnknownKind(t *testing.T) {
	if _, err := MustParse("1.0.0").Bump("micro"); err == nil {
		t.Fatal("Bump(micro) succeeded")
	}
}
