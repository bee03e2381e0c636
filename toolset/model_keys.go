package toolset

import (
	"reflect"
	"slices"
	"strings"
)

// ModelOptionKeys returns, sorted, the keys of a models[] entry that the
// model providers of DefaultRegistry read (the json tags of
// modelOptions), for config.Config.UnknownModelKeys.
func ModelOptionKeys() []string {
	t := reflect.TypeFor[modelOptions]()
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// ModelSendsUnknownKeys reports whether the provider a models[] use
// string names sends the entry's unknown keys in its request body (the
// OpenAI-compatible and Anthropic providers do; Gemini's SDK takes no
// extra request fields), for config.Config.UnknownModelKeys.
func ModelSendsUnknownKeys(use string) bool {
	switch use {
	case "langchain_google_genai:ChatGoogleGenerativeAI", "antler:gemini":
		return false
	}
	return true
}
