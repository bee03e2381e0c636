package tooltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/tool"
)

// caller makes the suite's handler calls.
type caller struct {
	// ctx bounds how long a call is waited for.
	ctx     context.Context
	tl      *tool.Tool
	newCall func(*tool.Tool) *tool.Call
}

// outcome is what one handler call did.
type outcome struct {
	res *tool.Result
	err error
	// panicked holds the recovered value when the handler panicked.
	panicked any
	// returned is false when the suite stopped waiting first.
	returned bool
}

// call runs the handler through tool.Invoke, as the agent loop does,
// with callCtx in its own goroutine, so that a handler that never returns
// costs a violation, not the test binary. What Invoke made of a panic or
// a Go error is taken back apart, since both are violations here.
func (c caller) call(callCtx context.Context, args []byte) outcome {
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		nilResult := false
		probe := func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			res, err := c.tl.Handler(ctx, call, args)
			nilResult = res == nil && err == nil
			return res, err
		}
		o.res, o.err = tool.Invoke(callCtx, probe, c.newCall(c.tl), args)
		if nilResult {
			o.res = nil // Invoke made an empty result of it; the suite reports it
		}
		if o.err == nil && o.res != nil && o.res.Failure != nil {
			f := o.res.Failure
			if f.Kind == "panic" {
				o.panicked = f.Detail
			} else {
				o.res, o.err = nil, errors.New(f.Detail)
			}
		}
		o.returned = true
		ch <- o
	}()
	select {
	case o := <-ch:
		return o
	case <-c.ctx.Done():
		return outcome{}
	}
}

// common reports the problems any call can have.
func (o outcome) common() string {
	switch {
	case !o.returned:
		return "the handler did not return before the suite's context ended"
	case o.panicked != nil:
		return fmt.Sprintf("the handler panicked: %v", o.panicked)
	case o.err == nil && o.res == nil:
		return "the handler returned a nil result and a nil error"
	case o.err == nil && o.res.IsError && !strings.HasPrefix(o.res.TextContent(), "Error: "):
		return fmt.Sprintf("error result text %q does not start with \"Error: \"", clip(o.res.TextContent()))
	}
	return ""
}

// errorResultProblem checks a call the model could correct: it must give
// an error result and a nil Go error.
func errorResultProblem(o outcome) string {
	if p := o.common(); p != "" {
		return p
	}
	if o.err != nil {
		return fmt.Sprintf("returned the Go error %q; a problem the model can correct must be an IsError result", o.err)
	}
	if !o.res.IsError {
		return fmt.Sprintf("returned a result without IsError: %q", clip(o.res.TextContent()))
	}
	return ""
}

// cancelProblem checks a call made with a cancelled context: any result
// is fine (the work may have been too quick to notice), a Go error must
// be the cancellation.
func cancelProblem(o outcome) string {
	if p := o.common(); p != "" {
		return p
	}
	if o.err != nil && !errors.Is(o.err, context.Canceled) {
		return fmt.Sprintf("returned the Go error %q, which is not context.Canceled", o.err)
	}
	return ""
}

// liveProblem checks a live sample call: a result with content.
func liveProblem(o outcome) string {
	if p := o.common(); p != "" {
		return p
	}
	switch {
	case o.err != nil:
		return fmt.Sprintf("returned the Go error %q", o.err)
	case o.res.IsError:
		return fmt.Sprintf("the sample call failed: %q", clip(o.res.TextContent()))
	case len(o.res.Content) == 0:
		return "the result has no content blocks"
	}
	return ""
}

func clip(s string) string {
	if r := []rune(s); len(r) > 300 {
		return string(r[:297]) + "..."
	}
	return s
}
