package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolport/toolport/internal/cache"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/schemacheck"
	"github.com/toolport/toolport/tool"
)

// allPackTools declares every pack's tools, every optional Brave search and
// web_search_searxng (declared only with an instance's URL) included.
func allPackTools(t testing.TB) []*tool.Tool {
	t.Helper()
	vars := map[string]string{"TOOLPORT_BRAVE_TOOLS": "all", "TOOLPORT_SEARXNG_URL": "http://127.0.0.1:8888"}
	c, err := config.New(func(k string) string { return vars[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	engines, err := openSharedEngines(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engines.Close() })
	tools, _, err := packTools(&Env{Config: c}, newSharedStore(c), engines)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) < 10 {
		t.Fatalf("only %d tools: the check would prove little", len(tools))
	}
	return tools
}

// diffSchema is one published schema, compiled by both validators.
type diffSchema struct {
	name string
	doc  *jsonschema.Schema
	ours *schemacheck.Schema
	ref  *sv.Schema
}

// realSchemas compiles every tool's input schema, its input schema with the
// cache arguments, and its result envelope, with schemacheck and with
// santhosh-tekuri/jsonschema (the reference, a full 2020-12 validator).
func realSchemas(t testing.TB) []diffSchema {
	t.Helper()
	tools := allPackTools(t)
	policies := map[string]tool.CachePolicy{}
	for _, tl := range tools {
		policies[tl.Name()] = tool.CachePolicy{TTL: time.Minute}
	}
	reg := tool.NewRegistry(tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}), policies))
	if err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	var out []diffSchema
	add := func(name string, doc *jsonschema.Schema) {
		ours, err := schemacheck.Compile(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		v, err := sv.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := sv.NewCompiler()
		c.DefaultDraft(sv.Draft2020)
		c.AssertFormat()
		if err := c.AddResource("toolport:///schema.json", v); err != nil {
			t.Fatal(err)
		}
		ref, err := c.Compile("toolport:///schema.json")
		if err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		out = append(out, diffSchema{name: name, doc: doc, ours: ours, ref: ref})
	}
	for _, tl := range tools {
		cached, _ := reg.Lookup(tl.Name())
		add(tl.Name()+" input", tl.InputSchema())
		add(tl.Name()+" cached input", cached.InputSchema())
		add(tl.Name()+" output", tl.OutputSchema())
		add(tl.Name()+" cached output", cached.OutputSchema())
	}
	return out
}

// refLocations are the instance locations of the reference's failures.
func refLocations(err error) []string {
	var locs []string
	var walk func(*sv.ValidationError)
	walk = func(ve *sv.ValidationError) {
		if len(ve.Causes) == 0 {
			locs = append(locs, "/"+strings.Join(ve.InstanceLocation, "/"))
		}
		for _, c := range ve.Causes {
			walk(c)
		}
	}
	if ve, ok := err.(*sv.ValidationError); ok {
		walk(ve)
	}
	slices.Sort(locs)
	return slices.Compact(locs)
}

func ourLocations(errs []schemacheck.Error) []string {
	var locs []string
	for _, e := range errs {
		locs = append(locs, "/"+strings.Join(e.Location, "/"))
	}
	slices.Sort(locs)
	return slices.Compact(locs)
}

// agree validates v with both and reports any difference in the verdict or
// in the locations that fail.
func (s diffSchema) agree(t testing.TB, v any) {
	t.Helper()
	ours := s.ours.Validate(v)
	refErr := s.ref.Validate(v)
	if (len(ours) == 0) != (refErr == nil) {
		raw, _ := json.Marshal(v)
		t.Fatalf("%s: verdicts differ on %s:\nschemacheck: %+v\nreference: %v", s.name, clip(raw), ours, refErr)
	}
	if got, want := ourLocations(ours), refLocations(refErr); !slices.Equal(got, want) {
		raw, _ := json.Marshal(v)
		t.Fatalf("%s: failing locations differ on %s:\nschemacheck: %q\nreference: %q", s.name, clip(raw), got, want)
	}
}

func clip(raw []byte) string {
	if len(raw) > 2000 {
		return string(raw[:2000]) + "…"
	}
	return string(raw)
}

// TestValidatorAgreesWithReference checks schemacheck against a full JSON
// Schema validator on values generated from every real tool schema: valid
// ones, and ones broken in each way the schemas can be broken.
func TestValidatorAgreesWithReference(t *testing.T) {
	schemas := realSchemas(t)
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := 300
	if testing.Short() {
		rounds = 30
	}
	valid, invalid := 0, 0
	for _, s := range schemas {
		for i := range rounds {
			g := generator{rng: rng, mutate: []float64{0, 0.02, 0.1, 0.3}[i%4]}
			v := g.value(s.doc, 0)
			s.agree(t, v)
			if len(s.ours.Validate(v)) == 0 {
				valid++
			} else {
				invalid++
			}
		}
	}
	// Both kinds must be common, or the comparison proves little.
	if total := valid + invalid; valid < total/10 || invalid < total/10 {
		t.Fatalf("%d valid and %d invalid values: the generator is lopsided", valid, invalid)
	}
	t.Logf("%d schemas, %d valid and %d invalid values", len(schemas), valid, invalid)
}

// FuzzValidatorAgreesWithReference validates arbitrary JSON against every
// real tool schema with both validators. The seeds are generated values; the
// fuzzer mutates their text.
func FuzzValidatorAgreesWithReference(f *testing.F) {
	schemas := realSchemas(f)
	rng := rand.New(rand.NewPCG(3, 4))
	// A seed for every eighth schema: the fuzzer varies which schema an input
	// names, and gathering coverage over a seed per schema took the whole
	// few seconds scripts/fuzz gives a target.
	for i, s := range schemas {
		if i%8 != 0 {
			continue
		}
		g := generator{rng: rng, mutate: []float64{0, 0.1}[i/8%2]}
		raw, err := json.Marshal(g.value(s.doc, 0))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(i), raw)
	}
	// Each input names one schema: checking every schema on every input made
	// an execution cost ~40 ms, too slow for the fuzzer to get anywhere.
	f.Fuzz(func(t *testing.T, which uint16, raw []byte) {
		v, err := schemacheck.Decode(raw)
		if err != nil {
			return
		}
		schemas[int(which)%len(schemas)].agree(t, v)
	})
}

// generator makes values for a schema, breaking it with probability mutate
// at each node.
type generator struct {
	rng    *rand.Rand
	mutate float64
}

func (g generator) chance(p float64) bool { return g.rng.Float64() < p }

// awkward are values that test type and number handling.
var awkward = []string{`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.0`, `1.5`, `1e2`, `1E-2`, `-0.0`,
	`1e400`, `-1e400`, `1e-400`, `9007199254740993`, `123456789012345678901234567890`, `2.5e1`, `""`, `"x"`,
	`"https://example.org/a?b=c#d"`, `"http://[::1]/"`, `"http://[fe80::1%25en0]/"`, `"rel/path"`, `"a b:c"`,
	`[]`, `[1,"a",null]`, `{}`, `{"a":1}`, `"ÿ日本語"`}

func (g generator) awkward() any {
	v, _ := schemacheck.Decode([]byte(awkward[g.rng.IntN(len(awkward))]))
	return v
}

func (g generator) value(s *jsonschema.Schema, depth int) any {
	if s == nil || depth > 12 {
		return g.awkward()
	}
	if g.chance(g.mutate) {
		return g.awkward()
	}
	if len(s.AnyOf) > 0 {
		return g.value(s.AnyOf[g.rng.IntN(len(s.AnyOf))], depth)
	}
	if len(s.Enum) > 0 && !g.chance(g.mutate) {
		return canon(s.Enum[g.rng.IntN(len(s.Enum))])
	}
	if s.Const != nil && !g.chance(g.mutate) {
		return canon(*s.Const)
	}
	typ := s.Type
	if len(s.Types) > 0 {
		typ = s.Types[g.rng.IntN(len(s.Types))]
	}
	switch typ {
	case "null":
		return nil
	case "boolean":
		return g.rng.IntN(2) == 0
	case "integer", "number":
		return g.number(s, typ == "integer")
	case "string":
		return g.string(s)
	case "array":
		n := g.rng.IntN(4)
		if s.MinItems != nil && !g.chance(g.mutate) {
			n = max(n, *s.MinItems)
		}
		if s.MaxItems != nil && !g.chance(g.mutate) {
			n = min(n, *s.MaxItems)
		}
		if g.chance(g.mutate) {
			n += 5
		}
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.value(s.Items, depth+1)
		}
		return arr
	case "object":
		obj := map[string]any{}
		for name, ps := range s.Properties {
			if slices.Contains(s.Required, name) && !g.chance(g.mutate) || g.chance(0.5) {
				obj[name] = g.value(ps, depth+1)
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
			for range g.rng.IntN(3) {
				obj["k"+strconv.Itoa(g.rng.IntN(100))] = g.value(s.AdditionalProperties, depth+1)
			}
		}
		if g.chance(g.mutate) {
			obj["unknownField"+strconv.Itoa(g.rng.IntN(3))] = g.awkward()
		}
		return obj
	}
	return g.awkward()
}

func (g generator) number(s *jsonschema.Schema, integer bool) any {
	lo, hi := -1000.0, 1000.0
	if s.Minimum != nil {
		lo = *s.Minimum
	}
	if s.Maximum != nil {
		hi = *s.Maximum
	}
	if s.ExclusiveMinimum != nil {
		lo = *s.ExclusiveMinimum + 1
	}
	if s.ExclusiveMaximum != nil {
		hi = *s.ExclusiveMaximum - 1
	}
	if g.chance(g.mutate) {
		// Just outside, or on, the bounds.
		for _, b := range []*float64{s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum} {
			if b != nil && g.chance(0.5) {
				return json.Number(strconv.FormatFloat(*b+float64(g.rng.IntN(3)-1), 'g', -1, 64))
			}
		}
	}
	x := lo + g.rng.Float64()*(hi-lo)
	if integer || g.chance(0.5) {
		if integer && g.chance(0.2) {
			return json.Number(fmt.Sprintf("%d.0", int64(x))) // an integer all the same
		}
		return json.Number(strconv.FormatInt(int64(x), 10))
	}
	return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
}

func (g generator) string(s *jsonschema.Schema) any {
	if s.Format == "uri" && !g.chance(g.mutate) {
		return []string{"https://example.org/", "http://a.b/c?d#e", "urn:isbn:123", "ftp://[2001:db8::1]/x"}[g.rng.IntN(4)]
	}
	if s.Pattern != "" && !g.chance(g.mutate) {
		// Values some of our patterns accept (country, language, freshness).
		return []string{"US", "de", "ALL", "en", "pt-br", "en-US", "pd", "2024-01-01to2024-02-01", "xx-YY"}[g.rng.IntN(9)]
	}
	n := g.rng.IntN(12)
	if s.MinLength != nil && !g.chance(g.mutate) {
		n = max(n, *s.MinLength)
	}
	if s.MaxLength != nil && !g.chance(g.mutate) {
		n = min(n, *s.MaxLength)
	}
	if g.chance(g.mutate) && s.MaxLength != nil {
		n = *s.MaxLength + 1
	}
	runes := []rune("abcXYZ 09-ü日")
	var b strings.Builder
	for range n {
		b.WriteRune(runes[g.rng.IntN(len(runes))])
	}
	return b.String()
}

func canon(v any) any {
	raw, _ := json.Marshal(v)
	out, _ := schemacheck.Decode(raw)
	return out
}

// BenchmarkValidateArguments validates a valid and an invalid argument
// object for web_search_brave with schemacheck and with the reference, and
// compiles the schema with each (what the first call of a tool pays).
func BenchmarkValidateArguments(b *testing.B) {
	var s diffSchema
	for _, x := range realSchemas(b) {
		if x.name == "web_search_brave input" {
			s = x
		}
	}
	if s.ours == nil {
		b.Fatal("no web_search_brave input schema")
	}
	for _, arg := range []struct{ name, raw string }{
		{"valid", `{"query":"semantic kernel","count":10,"offset":0,"country":"US","search_lang":"en","safesearch":"moderate"}`},
		{"invalid", `{"query":"","count":1000,"country":"USA","colour":"red"}`},
	} {
		v, err := schemacheck.Decode([]byte(arg.raw))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(arg.name+"/schemacheck", func(b *testing.B) {
			for b.Loop() {
				s.ours.Validate(v)
			}
		})
		b.Run(arg.name+"/reference", func(b *testing.B) {
			for b.Loop() {
				_ = s.ref.Validate(v)
			}
		})
	}
	b.Run("compile/schemacheck", func(b *testing.B) {
		for b.Loop() {
			if _, err := schemacheck.Compile(s.doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	raw, _ := json.Marshal(s.doc)
	b.Run("compile/reference", func(b *testing.B) {
		for b.Loop() {
			v, _ := sv.UnmarshalJSON(bytes.NewReader(raw))
			c := sv.NewCompiler()
			c.DefaultDraft(sv.Draft2020)
			c.AssertFormat()
			if err := c.AddResource("toolport:///schema.json", v); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Compile("toolport:///schema.json"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
