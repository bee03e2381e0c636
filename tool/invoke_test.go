package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
)

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("x"), "Error"},
		{fmt.Errorf("wrap: %w", errors.New("x")), "Error"},
		{&fs.PathError{Op: "open", Err: os.ErrNotExist}, "PathError"},
		{errors.Join(errors.New("a"), errors.New("b")), "Error"},
	} {
		if got := tool.ErrorKind(tc.err); got != tc.want {
			t.Errorf("ErrorKind(%T) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestInvokeEnforcesTheErrorContract checks the one invocation path:
// panics and Go errors become failure results carrying Failure, nil
// results become empty text, and only cancellation stays a Go error.
func TestInvokeEnforcesTheErrorContract(t *testing.T) {
	for _, tc := range []struct {
		name        string
		h           tool.Handler
		wantText    string
		wantFailure *tool.Failure
	}{
		{"panic", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { panic("boom") },
			"Error: Tool 'x' failed with panic: boom. Continue with available context, or choose an alternative tool.",
			&tool.Failure{Kind: "panic", Detail: "boom"}},
		{"go error", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return nil, &fs.PathError{Op: "open", Path: "/x", Err: os.ErrNotExist}
		}, "Error: Tool 'x' failed with PathError: open /x: file does not exist. Continue with available context, or choose an alternative tool.",
			&tool.Failure{Kind: "PathError", Detail: "open /x: file does not exist"}},
		{"nil result", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return nil, nil }, "", nil},
		{"error result passes unchanged", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Errorf("bad path"), nil
		}, "Error: bad path", nil},
		{"typed handler panic is recovered here", tool.New("x", "d", func(context.Context, *tool.Call, struct{}) (string, error) {
			panic("typed")
		}).Handler, "Error: Tool 'x' failed with panic: typed. Continue with available context, or choose an alternative tool.",
			&tool.Failure{Kind: "panic", Detail: "typed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tool.Invoke(t.Context(), tc.h, &tool.Call{Name: "x"}, json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TextContent(); got != tc.wantText {
				t.Errorf("text = %q, want %q", got, tc.wantText)
			}
			if (res.Failure == nil) != (tc.wantFailure == nil) || res.Failure != nil && *res.Failure != *tc.wantFailure {
				t.Errorf("Failure = %+v, want %+v", res.Failure, tc.wantFailure)
			}
			if tc.wantFailure != nil && !res.IsError {
				t.Error("a failure result must be an error result")
			}
		})
	}
	t.Run("cancellation stays a Go error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := tool.Invoke(ctx, func(ctx context.Context, _ *tool.Call, _ json.RawMessage) (*tool.Result, error) {
			return nil, ctx.Err()
		}, &tool.Call{Name: "x"}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("long detail is cut", func(t *testing.T) {
		res, _ := tool.Invoke(t.Context(), func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return nil, errors.New(strings.Repeat("d", 600))
		}, &tool.Call{Name: "x"}, nil)
		if !strings.Contains(res.TextContent(), strings.Repeat("d", 497)+"...") || strings.Contains(res.TextContent(), strings.Repeat("d", 498)) {
			t.Errorf("detail not cut at %d characters: %q", tool.MaxFailureDetail, res.TextContent())
		}
	})
}
