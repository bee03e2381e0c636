// Package tooltest is the contract suite that every tool source runs over
// the tools it builds (docs/extending.md): one call,
//
//	tooltest.Run(t, tools, tooltest.Options{Samples: samples})
//
// checks each tool, in a subtest named after it, for
//
//   - a name matching ^[A-Za-z0-9_-]{1,64}$, unique in the list, a non-empty
//     description and a handler;
//   - an input schema that is JSON, compiles as a draft 2020-12 JSON Schema,
//     has "type": "object" at the top, and lists in "required" only names
//     that are in "properties";
//   - the model-facing error channel (package tool's "Two error channels"):
//     malformed arguments (not JSON, an array, a string, null) and
//     arguments that violate the schema (a wrong type for the first typed
//     property, missing required properties) give a Result with IsError
//     set whose text starts with "Error: ", a nil Go error, and no panic;
//   - cancellation: called with its sample arguments and an already
//     cancelled context, the handler returns (the suite waits until its
//     own context ends, never for a fixed time), and a Go error it returns
//     is context.Canceled;
//   - results: a sample marked Live is also run with a live context and
//     must give a non-error result with at least one content block.
//
// Any result with IsError set must read "Error: ...". A violation the
// source cannot fix yet is listed in Options.Known with its reason: it is
// then logged instead of failing, and the entry fails once the violation
// is gone.
//
// [Check] runs the same checks and returns the violations, for callers
// that are not tests or that want to inspect them.
package tooltest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/tool"
)

// Sample is a valid call of one tool.
type Sample struct {
	// Args are arguments the tool accepts: a JSON object that satisfies
	// its input schema. The suite checks that they do.
	Args []byte
	// Live also runs the call with a live context and requires a
	// non-error result with content. False (the zero value) makes only
	// the call with a cancelled context. Set it only for tools whose call
	// is cheap and touches nothing outside the test's own temporary
	// folders (no network, no processes left behind).
	Live bool
}

// Options configure [Run] and [Check]. The zero value checks the names,
// descriptions, schemas and error channel of every tool with
// [DefaultCall] as the runtime, and skips the cancellation and result
// checks, which need sample arguments.
type Options struct {
	// Samples maps a tool name to a valid call of it. A tool without a
	// sample skips the cancellation and result checks, which Run logs.
	Samples map[string]Sample
	// Call returns the runtime of every handler call the suite makes (a
	// fresh one per call); nil means [DefaultCall].
	Call func(t *tool.Tool) *tool.Call
	// Known lists violations the tool source has accepted for now. A
	// violation that matches an entry is reported with Accepted set (Run
	// logs it instead of failing); an entry that matches nothing is
	// itself a violation of [RuleKnown], so the list only shrinks. Nil
	// accepts nothing.
	Known []Known
}

// Known is an accepted violation: the violations of Rule by the tool
// named Tool whose message contains Contains ("" matches all of them).
type Known struct {
	Tool, Rule, Contains string
	// Reason says why the violation is accepted; it is required.
	Reason string
}

// DefaultCall is the runtime the suite passes when Options.Call is nil:
// a call id, the tool's name, and a thread and user named "tooltest".
func DefaultCall(t *tool.Tool) *tool.Call {
	return &tool.Call{ID: "call_tooltest", Name: t.Name, ThreadID: "tooltest", UserID: "tooltest"}
}

// The rules a [Violation] can break.
const (
	RuleName          = "name"           // name syntax and uniqueness
	RuleDescription   = "description"    // non-empty description
	RuleHandler       = "handler"        // a non-nil handler
	RuleSchema        = "schema"         // input schema validity
	RuleSample        = "sample"         // the caller's sample satisfies the schema
	RuleMalformedArgs = "malformed_args" // non-object arguments give an error result
	RuleInvalidArgs   = "invalid_args"   // schema-violating arguments give an error result
	RuleCancel        = "cancel"         // a cancelled call returns, with no other Go error
	RuleResult        = "result"         // a live sample call gives a result with content
	RuleKnown         = "known"          // every Options.Known entry matches a violation
)

// Violation is one broken rule of one tool.
type Violation struct {
	// Tool is the tool's name and Index its position in the list.
	Tool  string
	Index int
	// Rule is one of the Rule constants.
	Rule string
	// Msg says what was wrong, with the arguments that showed it.
	Msg string
	// Accepted is the reason of the Options.Known entry that accepts
	// the violation; "" for a violation that fails.
	Accepted string
}

func (v Violation) Error() string {
	return fmt.Sprintf("tool #%d %q: %s: %s", v.Index, v.Tool, v.Rule, v.Msg)
}

// Run checks every tool of tools in a subtest named after it (the index
// for a tool with no name) and reports each violation as a test error.
// Handlers run under t.Context(), bounded by the test's deadline, so a
// handler that never returns fails its subtest with a message instead of
// stalling the binary until go test's own timeout.
func Run(t *testing.T, tools []*tool.Tool, opts Options) {
	t.Helper()
	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		// Leave a tenth of the remaining time to report the failure.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Until(dl)/10))
		defer cancel()
	}
	if len(tools) == 0 {
		t.Error("tooltest.Run: no tools to check")
	}
	matched := make([]bool, len(opts.Known))
	for i, tl := range tools {
		name := fmt.Sprintf("#%d", i)
		if tl != nil && tl.Name != "" {
			name = tl.Name
		}
		t.Run(name, func(t *testing.T) {
			r := checkTool(ctx, tools, i, opts)
			r.accept(opts.Known, matched)
			for _, n := range r.notes {
				t.Log(n)
			}
			for _, v := range r.violations {
				if v.Accepted != "" {
					t.Logf("known violation (%s): %s: %s", v.Accepted, v.Rule, v.Msg)
					continue
				}
				t.Errorf("%s: %s", v.Rule, v.Msg)
			}
		})
	}
	for _, v := range knownProblems(tools, opts.Known, matched) {
		t.Error(v.Msg)
	}
}

// Check runs the checks of [Run] over tools and returns the violations in
// list order. ctx bounds how long the suite waits for a handler and is
// the context of the live sample calls.
func Check(ctx context.Context, tools []*tool.Tool, opts Options) []Violation {
	var out []Violation
	matched := make([]bool, len(opts.Known))
	for i := range tools {
		r := checkTool(ctx, tools, i, opts)
		r.accept(opts.Known, matched)
		out = append(out, r.violations...)
	}
	return append(out, knownProblems(tools, opts.Known, matched)...)
}

// knownProblems reports the Known entries that give no reason, name no
// tool of the list, or matched no violation.
func knownProblems(tools []*tool.Tool, known []Known, matched []bool) []Violation {
	var out []Violation
	for i, k := range known {
		var msg string
		switch {
		case strings.TrimSpace(k.Reason) == "":
			msg = "gives no reason"
		case !slices.ContainsFunc(tools, func(t *tool.Tool) bool { return t != nil && t.Name == k.Tool }):
			msg = "names no tool in the list"
		case !matched[i]:
			msg = "did not occur; remove it from Options.Known"
		default:
			continue
		}
		out = append(out, Violation{Tool: k.Tool, Index: -1, Rule: RuleKnown,
			Msg: fmt.Sprintf("known violation %s/%s %s", k.Tool, k.Rule, msg)})
	}
	return out
}

// accept marks r's violations that a Known entry (with a reason) for its
// tool covers, and sets matched[i] for each entry i that covered one.
func (r *report) accept(known []Known, matched []bool) {
	for i, k := range known {
		if k.Tool != r.tool || strings.TrimSpace(k.Reason) == "" {
			continue
		}
		for j := range r.violations {
			if v := &r.violations[j]; v.Rule == k.Rule && v.Accepted == "" && strings.Contains(v.Msg, k.Contains) {
				v.Accepted, matched[i] = k.Reason, true
			}
		}
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// report collects one tool's violations and notes.
type report struct {
	tool       string
	index      int
	violations []Violation
	notes      []string
}

func (r *report) fail(rule, format string, args ...any) {
	r.violations = append(r.violations, Violation{Tool: r.tool, Index: r.index, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func checkTool(ctx context.Context, tools []*tool.Tool, i int, opts Options) *report {
	tl := tools[i]
	r := &report{index: i}
	if tl == nil {
		r.fail(RuleHandler, "the tool is nil")
		return r
	}
	r.tool = tl.Name
	if !nameRE.MatchString(tl.Name) {
		r.fail(RuleName, "name %q does not match %s", tl.Name, nameRE)
	}
	for j, other := range tools[:i] {
		if other != nil && other.Name == tl.Name {
			r.fail(RuleName, "name %q is also the name of tool #%d", tl.Name, j)
			break
		}
	}
	if strings.TrimSpace(tl.Description) == "" {
		r.fail(RuleDescription, "the description is empty")
	}
	s := checkSchema(r, tl.InputSchema)
	if tl.Handler == nil {
		r.fail(RuleHandler, "the handler is nil")
		return r
	}
	newCall := opts.Call
	if newCall == nil {
		newCall = DefaultCall
	}
	c := caller{ctx: ctx, tl: tl, newCall: newCall}

	for _, args := range malformedArgs {
		if p := errorResultProblem(c.call(ctx, []byte(args))); p != "" {
			r.fail(RuleMalformedArgs, "arguments %s: %s", args, p)
		}
	}
	sample, hasSample := opts.Samples[tl.Name]
	if s != nil {
		if hasSample {
			if err := s.validate(sample.Args); err != nil {
				r.fail(RuleSample, "sample arguments %s do not satisfy the schema: %v", sample.Args, err)
			}
		}
		var base []byte
		if hasSample {
			base = sample.Args
		}
		cases, notes := s.invalidArgs(base)
		for _, n := range notes {
			r.note("%s", n)
		}
		for _, args := range cases {
			if p := errorResultProblem(c.call(ctx, args)); p != "" {
				r.fail(RuleInvalidArgs, "arguments %s violate the schema: %s", args, p)
			}
		}
	}

	if !hasSample {
		r.note("no sample arguments: cancellation and result checks skipped")
		return r
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if p := cancelProblem(c.call(cancelled, sample.Args)); p != "" {
		r.fail(RuleCancel, "arguments %s with a cancelled context: %s", sample.Args, p)
	}
	if sample.Live {
		if p := liveProblem(c.call(ctx, sample.Args)); p != "" {
			r.fail(RuleResult, "arguments %s: %s", sample.Args, p)
		}
	} else {
		r.note("sample not live: result check skipped")
	}
	return r
}

// malformedArgs are arguments that are not a JSON object. An empty
// argument string is not among them: package tool reads it as {}.
var malformedArgs = []string{`{"unterminated`, `[1,2]`, `"text"`, `null`}
