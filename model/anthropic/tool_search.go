package anthropic

import (
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/antlerhq/antler/model"
)

// This file is Anthropic's own tool search (the tool search tool with
// defer_loading): the request's server tool, and the server blocks of a
// response, kept on the assistant message and sent back with it, since
// the tools a search returned stay loaded only while its blocks are in
// the conversation.

// serverBlocksKey is the Message.Meta key of the server blocks of an
// assistant message ([]serverBlock, or its JSON form once stored).
const serverBlocksKey = "anthropic_server_blocks"

// serverBlock is a server_tool_use or tool_search_tool_result block.
type serverBlock struct {
	Type string `json:"type"`
	// server_tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_search_tool_result
	ToolUseID      string   `json:"tool_use_id,omitempty"`
	ToolReferences []string `json:"tool_references,omitempty"`
	ErrorCode      string   `json:"error_code,omitempty"`
}

// SupportsToolSearch reports that the Messages API searches deferred
// tools itself ([model.ToolSearcher]).
func (m *Model) SupportsToolSearch() bool { return true }

// searchTool is the server tool of a ProviderToolSearch variant.
func searchTool(variant string) (sdk.ToolUnionParam, bool) {
	switch variant {
	case model.ToolSearchRegex:
		return sdk.ToolUnionParam{OfToolSearchToolRegex20251119: &sdk.ToolSearchToolRegex20251119Param{
			Type: sdk.ToolSearchToolRegex20251119TypeToolSearchToolRegex20251119}}, true
	case model.ToolSearchBM25:
		return sdk.ToolUnionParam{OfToolSearchToolBm25_20251119: &sdk.ToolSearchToolBm25_20251119Param{
			Type: sdk.ToolSearchToolBm25_20251119TypeToolSearchToolBm25_20251119}}, true
	}
	return sdk.ToolUnionParam{}, false
}

// serverBlocksOf returns the server blocks kept on msg.
func serverBlocksOf(msg model.Message) []serverBlock {
	v, ok := msg.Meta[serverBlocksKey]
	if !ok {
		return nil
	}
	if bs, ok := v.([]serverBlock); ok {
		return bs
	}
	raw, err := json.Marshal(v) // stored and read back: generic JSON values
	if err != nil {
		return nil
	}
	var bs []serverBlock
	if json.Unmarshal(raw, &bs) != nil {
		return nil
	}
	return bs
}

// serverBlockParams returns the server blocks of msg as request blocks.
func serverBlockParams(msg model.Message) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, b := range serverBlocksOf(msg) {
		switch b.Type {
		case "server_tool_use":
			var input any = map[string]any{}
			if len(b.Input) > 0 {
				_ = json.Unmarshal(b.Input, &input)
			}
			out = append(out, sdk.ContentBlockParamUnion{OfServerToolUse: &sdk.ServerToolUseBlockParam{
				ID: b.ID, Name: sdk.ServerToolUseBlockParamName(b.Name), Input: input}})
		case "tool_search_tool_result":
			res := &sdk.ToolSearchToolResultBlockParam{ToolUseID: b.ToolUseID}
			if b.ErrorCode != "" {
				res.Content.OfRequestToolSearchToolResultError = &sdk.ToolSearchToolResultErrorParam{
					ErrorCode: sdk.ToolSearchToolResultErrorCode(b.ErrorCode)}
			} else {
				refs := make([]sdk.ToolReferenceBlockParam, len(b.ToolReferences))
				for i, n := range b.ToolReferences {
					refs[i] = sdk.ToolReferenceBlockParam{ToolName: n}
				}
				res.Content.OfRequestToolSearchToolSearchResultBlock = &sdk.ToolSearchToolSearchResultBlockParam{ToolReferences: refs}
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolSearchToolResult: res})
		}
	}
	return out
}
