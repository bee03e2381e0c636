package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

const reportText = "# Report\n\nEverything went fine.\n"

// reportScript: write a report with a tool, then answer from its result.
func reportScript() *modeltest.Model {
	args, _ := json.Marshal(map[string]string{"name": "report.md", "text": reportText})
	return modeltest.FromScript(modeltest.Script{ChunkSize: 4, Turns: []modeltest.Turn{
		{Text: "Let me write the report.", ToolCalls: []model.ToolCall{{Name: "make_report", Arguments: args}}},
		{Func: func(req *model.Request) modeltest.Turn {
			return modeltest.Turn{Text: "Done: " + modeltest.LastMessage(req).Content}
		}},
	}})
}

// upload posts files as the frontend does (multipart, one "files" part
// each) and returns the decoded answer.
func (e *env) upload(tid, token string, files map[string]string) (int, map[string]any) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		fw, err := mw.CreateFormFile("files", name)
		if err != nil {
			e.t.Fatal(err)
		}
		io.WriteString(fw, content)
	}
	mw.Close()
	req, _ := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/api/threads/"+tid+"/uploads", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestChatReplay replays the calls DeerFlow's frontend makes for one whole
// chat (docs/api.md): page load, thread creation with a
// client-chosen id, an upload before the first run, a streamed run with a
// tool call, the reload through history and messages/page, the sidebar
// search, and the artifact download with a Range request.
func TestChatReplay(t *testing.T) {
	e := newEnv(t, envOptions{model: reportScript()})

	// Page load: the calls every chat page makes must not answer 401.
	var models struct {
		Models []map[string]any `json:"models"`
	}
	e.json("GET", "/api/models", "", nil, 200, &models)
	if len(models.Models) != 1 || models.Models[0]["name"] != "test-model" || models.Models[0]["display_name"] != "Test Model" {
		t.Fatalf("models = %v", models.Models)
	}
	if b, _ := json.Marshal(models); strings.Contains(string(b), "sk-secret") {
		t.Fatalf("models leak the api key: %s", b)
	}
	for _, p := range []string{"/api/features", "/api/skills", "/api/suggestions/config", "/api/v1/auth/me"} {
		if got := e.status("GET", p, "", nil); got != 200 {
			t.Errorf("GET %s = %d", p, got)
		}
	}
	if got := e.status("GET", "/api/threads/nope/token-usage", "", nil); got != 404 {
		t.Errorf("token-usage = %d, want 404", got)
	}

	// Upload before the thread exists (a new chat).
	tid := uuid.NewString()
	code, up := e.upload(tid, "", map[string]string{"notes.txt": "some notes"})
	if code != 200 || up["success"] != true {
		t.Fatalf("upload = %d %v", code, up)
	}
	file := up["files"].([]any)[0].(map[string]any)
	if file["virtual_path"] != "/mnt/user-data/uploads/notes.txt" {
		t.Fatalf("uploaded file = %v", file)
	}

	// The SDK creates the thread with the browser's uuid.
	var th map[string]any
	e.json("POST", "/api/langgraph/threads", "", map[string]any{"thread_id": tid, "metadata": map[string]any{}}, 200, &th)
	if th["thread_id"] != tid {
		t.Fatalf("thread = %v", th)
	}

	// Stream the run.
	files := []any{map[string]any{"filename": "notes.txt", "size": 10, "path": file["virtual_path"], "status": "uploaded"}}
	resp := e.startStream(tid, "", runBody(tid, humanInput("Write the report", map[string]any{"files": files})))
	for k, want := range map[string]string{"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	rid, ok := runIDFrom(resp.Header.Get("Content-Location"), tid)
	if !ok {
		t.Fatalf("Content-Location %q does not name the run", resp.Header.Get("Content-Location"))
	}
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Events[0].Event != "metadata" || tr.Metadata["run_id"] != rid {
		t.Errorf("first frame = %s %s, want metadata of run %s", tr.Events[0].Event, tr.Events[0].Data, rid)
	}
	if last := tr.Events[len(tr.Events)-1]; last.Event != "end" || string(last.Data) != "null" {
		t.Errorf("last frame = %s %s, want end null", last.Event, last.Data)
	}
	if len(tr.Errors) > 0 {
		t.Fatalf("error frames: %v", tr.Errors)
	}
	final := tr.Last()
	msgs := messagesOf(final)
	types := []string{}
	for _, m := range msgs {
		types = append(types, m["type"].(string))
	}
	if diff := cmp.Diff([]string{"human", "ai", "tool", "ai"}, types); diff != "" {
		t.Fatalf("final values message types (-want +got):\n%s", diff)
	}
	human := msgs[0]
	if human["id"] == nil || human["id"] == "" {
		t.Errorf("human message has no server-assigned id: %v", human)
	}
	if kw := human["additional_kwargs"].(map[string]any); kw["files"] == nil {
		t.Errorf("human message lost its files: %v", kw)
	}
	if !strings.Contains(human["content"].(string), "/mnt/user-data/uploads/notes.txt") {
		t.Errorf("human content does not list the upload: %q", human["content"])
	}
	ai := msgs[1]
	calls := ai["tool_calls"].([]any)
	call := calls[0].(map[string]any)
	if call["name"] != "make_report" || call["type"] != "tool_call" || call["args"].(map[string]any)["name"] != "report.md" {
		t.Errorf("tool call = %v", call)
	}
	toolMsg := msgs[2]
	if toolMsg["tool_call_id"] != call["id"] || toolMsg["status"] != "success" || toolMsg["name"] != "make_report" {
		t.Errorf("tool message = %v", toolMsg)
	}
	answer := msgs[3]
	if answer["content"] != "Done: wrote /mnt/user-data/outputs/report.md" {
		t.Errorf("answer = %q", answer["content"])
	}
	if diff := cmp.Diff([]any{"/mnt/user-data/outputs/report.md"}, final["artifacts"]); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	if _, leak := final["thread_data"]; leak {
		t.Errorf("values leak host paths: %v", final["thread_data"])
	}

	// Streamed chunks, merged by id, equal the final messages: deltas
	// only, tool-call arguments as tool_call_chunks.
	for _, want := range []map[string]any{ai, answer} {
		got := tr.Messages[want["id"].(string)]
		if got == nil {
			t.Fatalf("no streamed chunks for %v", want["id"])
		}
		if got["content"] != want["content"] {
			t.Errorf("merged chunks of %v: content %q, want %q", want["id"], got["content"], want["content"])
		}
	}
	tc := tr.Messages[ai["id"].(string)]["tool_call_chunks"].([]any)[0].(map[string]any)
	var args map[string]any
	if err := json.Unmarshal([]byte(tc["args"].(string)), &args); err != nil || args["text"] != reportText {
		t.Errorf("tool_call_chunks args = %v (%v)", tc["args"], err)
	}
	if got := tr.Messages[toolMsg["id"].(string)]; got == nil || got["type"] != "tool" {
		t.Errorf("tool message not streamed: %v", got)
	}
	if len(tr.Updates) == 0 || len(tr.Values) < 3 {
		t.Errorf("updates = %d, values = %d frames", len(tr.Updates), len(tr.Values))
	}

	// After the run the SDK re-reads history {limit: 1}.
	var hist []map[string]any
	e.json("POST", "/api/langgraph/threads/"+tid+"/history", "", map[string]any{"limit": 1}, 200, &hist)
	if len(hist) != 1 {
		t.Fatalf("history = %d entries", len(hist))
	}
	if _, has := hist[0]["checkpoint"]; has {
		t.Errorf("history carries a checkpoint object")
	}
	if diff := cmp.Diff(final["messages"], hist[0]["values"].(map[string]any)["messages"]); diff != "" {
		t.Errorf("history messages differ from the final values (-stream +history):\n%s", diff)
	}

	// messages/page: the canonical transcript, paged backwards.
	var page struct {
		Data    []map[string]any `json:"data"`
		HasMore bool             `json:"has_more"`
		Next    *int             `json:"next_before_seq"`
	}
	e.json("GET", "/api/threads/"+tid+"/messages/page", "", nil, 200, &page)
	if len(page.Data) != 4 || page.HasMore || page.Next != nil {
		t.Fatalf("page = %d rows, has_more %v, next %v", len(page.Data), page.HasMore, page.Next)
	}
	for i, row := range page.Data {
		if row["seq"] != float64(i+1) || row["run_id"] != rid || row["metadata"].(map[string]any)["caller"] != "lead_agent" {
			t.Errorf("row %d = seq %v run %v meta %v", i, row["seq"], row["run_id"], row["metadata"])
		}
	}
	e.json("GET", "/api/threads/"+tid+"/messages/page?limit=3", "", nil, 200, &page)
	if len(page.Data) != 3 || !page.HasMore || page.Next == nil || *page.Next != 2 || page.Data[0]["seq"] != float64(2) {
		t.Fatalf("newest page = %d rows, has_more %v, next %v", len(page.Data), page.HasMore, page.Next)
	}
	e.json("GET", fmt.Sprintf("/api/threads/%s/messages/page?limit=3&before_seq=%d", tid, *page.Next), "", nil, 200, &page)
	if len(page.Data) != 1 || page.HasMore || page.Next != nil || page.Data[0]["seq"] != float64(1) {
		t.Fatalf("older page = %v, has_more %v, next %v", page.Data, page.HasMore, page.Next)
	}

	// Thread, run and state.
	e.json("GET", "/api/langgraph/threads/"+tid, "", nil, 200, &th)
	if th["status"] != "idle" {
		t.Errorf("thread status = %v", th["status"])
	}
	var rn map[string]any
	e.json("GET", "/api/langgraph/threads/"+tid+"/runs/"+rid, "", nil, 200, &rn)
	if rn["status"] != "success" || rn["run_id"] != rid {
		t.Errorf("run = %v", rn)
	}
	var state map[string]any
	e.json("GET", "/api/langgraph/threads/"+tid+"/state", "", nil, 200, &state)
	if len(messagesOf(state["values"].(map[string]any))) != 4 {
		t.Errorf("state = %v", state)
	}

	// Rename (POST state) and the sidebar search.
	e.json("POST", "/api/langgraph/threads/"+tid+"/state", "", map[string]any{"values": map[string]any{"title": "Quarterly report"}}, 200, nil)
	other := uuid.NewString()
	e.json("POST", "/api/langgraph/threads", "", map[string]any{"thread_id": other}, 200, nil)
	var found []map[string]any
	e.json("POST", "/api/langgraph/threads/search", "", map[string]any{"limit": 50, "offset": 0,
		"sort_by": "updated_at", "sort_order": "desc", "select": []string{"thread_id", "updated_at", "values", "metadata"}}, 200, &found)
	if len(found) != 2 || found[0]["thread_id"] != other {
		t.Fatalf("search = %v", found)
	}
	if found[1]["values"].(map[string]any)["title"] != "Quarterly report" {
		t.Errorf("search title = %v", found[1]["values"])
	}
	// Pinning moves a thread first.
	e.json("PATCH", "/api/threads/"+tid, "", map[string]any{"metadata": map[string]any{"deerflow_pinned": true}}, 200, nil)
	e.json("POST", "/api/langgraph/threads/search", "", map[string]any{"limit": 1}, 200, &found)
	if len(found) != 1 || found[0]["thread_id"] != tid {
		t.Errorf("pinned thread not first: %v", found)
	}
	e.json("POST", "/api/langgraph/threads/search", "", map[string]any{"limit": 1, "offset": 1}, 200, &found)
	if len(found) != 1 || found[0]["thread_id"] != other {
		t.Errorf("second page = %v", found)
	}

	// The artifacts panel: a ranged preview, the full file, a download.
	art := "/api/threads/" + tid + "/artifacts/mnt/user-data/outputs/report.md"
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.url+art, nil)
	req.Header.Set("Range", "bytes=0-7")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 206 || string(body) != reportText[:8] || r2.Header.Get("Content-Range") != fmt.Sprintf("bytes 0-7/%d", len(reportText)) {
		t.Errorf("ranged artifact = %d %q %q", r2.StatusCode, body, r2.Header.Get("Content-Range"))
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", len(reportText)+10))
	r3, _ := http.DefaultClient.Do(req)
	r3.Body.Close()
	if r3.StatusCode != 416 || r3.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(reportText)) {
		t.Errorf("unsatisfiable range = %d %q", r3.StatusCode, r3.Header.Get("Content-Range"))
	}
	r4 := e.do("GET", art+"?download=true", "", nil)
	body, _ = io.ReadAll(r4.Body)
	r4.Body.Close()
	if r4.StatusCode != 200 || string(body) != reportText || !strings.HasPrefix(r4.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download = %d %q %q", r4.StatusCode, body, r4.Header.Get("Content-Disposition"))
	}
	if got := e.status("GET", file["artifact_url"].(string), "", nil); got != 200 {
		t.Errorf("upload artifact_url = %d", got)
	}
	for _, bad := range []string{
		"/api/threads/" + tid + "/artifacts/mnt/user-data/outputs/../../../../config.yaml",
		"/api/threads/" + tid + "/artifacts/mnt/user-data/outputs/%2e%2e/%2e%2e/workspace/x",
		"/api/threads/" + tid + "/artifacts/mnt/user-data/workspace/x",
		"/api/threads/" + tid + "/artifacts/etc/passwd",
		"/api/threads/" + tid + "/artifacts/mnt/user-data/outputs/missing.md",
	} {
		if got := e.status("GET", bad, "", nil); got != 404 && got != 403 {
			t.Errorf("GET %s = %d, want 404 or 403", bad, got)
		}
	}
}
