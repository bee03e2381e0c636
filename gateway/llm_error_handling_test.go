package gateway_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model/modeltest"
)

// A model call that fails after its retries reaches the frontend as
// DeerFlow's does: an llm_retry custom frame before the retry (the
// frontend toasts its message), then the fallback assistant message with
// its error marker in additional_kwargs, no error frame, and the run
// recorded as error.
func TestStream_llmErrorFallback(t *testing.T) {
	down := modeltest.Turn{Status: 503, Error: "upstream down"}
	e := newEnv(t, envOptions{model: modeltest.New(down, down),
		config: "llm_call:\n  retry_max_attempts: 2\n  retry_base_delay_ms: 0\n  retry_cap_delay_ms: 0\n"})
	tid := "5d0c3c5e-0000-4000-8000-00000000e27a"
	resp := e.startStream(tid, "", runBody(tid, humanInput("hi", nil)))
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Errors) > 0 {
		t.Errorf("error frames: %v", tr.Errors)
	}
	want := []map[string]any{{"type": "llm_retry", "attempt": float64(1), "max_attempts": float64(2), "wait_ms": float64(0),
		"reason": "transient", "message": "LLM request retry 1/2: provider request failed temporarily. Retrying in 1s."}}
	if diff := cmp.Diff(want, tr.Custom); diff != "" {
		t.Errorf("custom frames (-want +got):\n%s", diff)
	}
	msgs := messagesOf(tr.Last())
	if len(msgs) == 0 {
		t.Fatal("no messages in the last values frame")
	}
	last := msgs[len(msgs)-1]
	kw, _ := last["additional_kwargs"].(map[string]any)
	if last["type"] != "ai" || last["content"] != "The configured LLM provider is temporarily unavailable after multiple retries. Please wait a moment and continue the conversation." ||
		kw["deerflow_error_fallback"] != true || kw["error_reason"] != "transient" {
		t.Errorf("last message = %v", last)
	}
	e.waitRun(tid, rid, "error")
}
