// Package tmpl renders the part of text/template's language that Antler's
// embedded prompt and tool-description files use: text, {{.Field}} (a
// chain such as {{.A.B}} too) and {{.}}, {{if}} / {{else}} / {{else if}},
// {{range}} over a slice or array (with {{else}}), and the {{- -}} trim
// markers. Parsing is text/template/parse's, so the syntax and the
// whitespace trimming are exactly text/template's; anything else (functions,
// pipes, variables, with, define, template, break, continue) is refused by
// Parse, naming the file and line.
//
// It exists for the size of the binary. text/template's evaluator finds
// methods by name (reflect.Value.MethodByName with a name known only at
// run time), and once the linker sees such a call reachable it keeps every
// exported method of every type that could be converted to an interface:
// for Antler that was most of both provider SDKs, about half of the
// binary (docs/benchmarks.md, "Binary size"). This package reads struct
// fields and map keys only, never methods, so the linker's dead-code
// elimination of methods stays on.
//
// Differences from text/template, all stricter: a missing map key or an
// unknown field is an error (text/template prints "<no value>" for a
// missing key), and a range over a map, an integer or a channel is an
// error.
package tmpl

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"text/template/parse"
)

// Template is a parsed template. It is immutable and safe for concurrent
// use.
type Template struct {
	tree *parse.Tree
}

// Parse parses text, named name in errors. It fails on a syntax error and
// on any construct outside the package's subset.
func Parse(name, text string) (*Template, error) {
	trees, err := parse.Parse(name, text, "{{", "}}", nil)
	if err != nil {
		return nil, fmt.Errorf("tmpl: %w", err)
	}
	if len(trees) != 1 {
		return nil, fmt.Errorf("tmpl: %s: {{define}} and {{block}} are not supported", name)
	}
	t := &Template{tree: trees[name]}
	if t.tree == nil || t.tree.Root == nil {
		return nil, fmt.Errorf("tmpl: %s: no template of that name", name)
	}
	if err := t.check(t.tree.Root); err != nil {
		return nil, err
	}
	return t, nil
}

// MustParse is Parse for templates embedded in the program, whose errors
// are programming mistakes: it panics on an error.
func MustParse(name, text string) *Template {
	t, err := Parse(name, text)
	if err != nil {
		panic(err)
	}
	return t
}

// check refuses every node outside the subset.
func (t *Template) check(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := t.check(c); err != nil {
				return err
			}
		}
		return nil
	case *parse.TextNode:
		return nil
	case *parse.ActionNode:
		return t.checkPipe(n, n.Pipe)
	case *parse.IfNode:
		return t.checkBranch(n, &n.BranchNode)
	case *parse.RangeNode:
		return t.checkBranch(n, &n.BranchNode)
	}
	return t.errorf(n, "%s is not supported", n)
}

func (t *Template) checkBranch(n parse.Node, b *parse.BranchNode) error {
	if err := t.checkPipe(n, b.Pipe); err != nil {
		return err
	}
	if err := t.check(b.List); err != nil {
		return err
	}
	return t.check(b.ElseList)
}

// checkPipe accepts a pipeline of one field or the dot, without variables.
func (t *Template) checkPipe(n parse.Node, p *parse.PipeNode) error {
	if len(p.Decl) > 0 || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return t.errorf(n, "%s is not supported (only {{.Field}} and {{.}})", p)
	}
	switch p.Cmds[0].Args[0].(type) {
	case *parse.FieldNode, *parse.DotNode:
		return nil
	}
	return t.errorf(n, "%s is not supported (only {{.Field}} and {{.}})", p)
}

// Execute writes the template applied to data to w. Fields are read from
// structs (exported fields) and maps with string keys, through pointers
// and interfaces.
func (t *Template) Execute(w io.Writer, data any) error {
	return t.walk(w, reflect.ValueOf(data), t.tree.Root)
}

func (t *Template) walk(w io.Writer, dot reflect.Value, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := t.walk(w, dot, c); err != nil {
				return err
			}
		}
		return nil
	case *parse.TextNode:
		_, err := w.Write(n.Text)
		return err
	case *parse.ActionNode:
		v, err := t.eval(dot, n, n.Pipe)
		if err != nil {
			return err
		}
		if !v.IsValid() {
			return t.errorf(n, "%s is nil", n.Pipe)
		}
		_, err = fmt.Fprint(w, v.Interface())
		return err
	case *parse.IfNode:
		v, err := t.eval(dot, n, n.Pipe)
		if err != nil {
			return err
		}
		if isTrue(v) {
			return t.walk(w, dot, n.List)
		}
		return t.walk(w, dot, n.ElseList)
	case *parse.RangeNode:
		return t.walkRange(w, dot, n)
	}
	return t.errorf(n, "%s is not supported", n) // check refused it already
}

func (t *Template) walkRange(w io.Writer, dot reflect.Value, n *parse.RangeNode) error {
	v, err := t.eval(dot, n, n.Pipe)
	if err != nil {
		return err
	}
	v = indirect(v)
	if !v.IsValid() || v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return t.errorf(n, "range over %s: only a slice or an array", kindOf(v))
	}
	if v.Len() == 0 {
		return t.walk(w, dot, n.ElseList)
	}
	for i := range v.Len() {
		if err := t.walk(w, v.Index(i), n.List); err != nil {
			return err
		}
	}
	return nil
}

// eval evaluates a pipeline that check accepted: the dot or a field chain.
func (t *Template) eval(dot reflect.Value, n parse.Node, p *parse.PipeNode) (reflect.Value, error) {
	f, ok := p.Cmds[0].Args[0].(*parse.FieldNode)
	if !ok {
		return dot, nil
	}
	v := dot
	for _, name := range f.Ident {
		v = indirect(v)
		switch {
		case v.Kind() == reflect.Struct:
			sf, ok := v.Type().FieldByName(name)
			if !ok || !sf.IsExported() {
				return reflect.Value{}, t.errorf(n, "%s has no exported field %s", v.Type(), name)
			}
			v = v.FieldByIndex(sf.Index)
		case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
			e := v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key()))
			if !e.IsValid() {
				return reflect.Value{}, t.errorf(n, "map has no key %q", name)
			}
			v = e
		default:
			return reflect.Value{}, t.errorf(n, "field %s of %s: only a struct or a map with string keys has fields", name, kindOf(v))
		}
	}
	if v.Kind() == reflect.Interface {
		v = v.Elem() // a map[string]any value: judge and print what it holds
	}
	return v, nil
}

// indirect follows pointers and interfaces; a nil one gives the zero Value.
func indirect(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		v = v.Elem()
	}
	return v
}

// isTrue is text/template's truth: false for the zero value of a number,
// bool, pointer, interface, channel or func, and for an empty string,
// slice, array or map; true for any struct.
func isTrue(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0
	case reflect.Bool:
		return v.Bool()
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !v.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0
	}
	return true // struct
}

func kindOf(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	return v.Type().String()
}

// errorf names the template, line and column of n.
func (t *Template) errorf(n parse.Node, format string, args ...any) error {
	loc, _ := t.tree.ErrorContext(n)
	return errors.New("tmpl: " + loc + ": " + fmt.Sprintf(format, args...))
}
