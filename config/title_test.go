package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTitleSection(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Title
	}{
		{
			name: "DeerFlow's example keeps the defaults",
			src:  "title:\n  enabled: true\n  max_words: 6\n  max_chars: 60\n  model_name: null\n",
			want: defaultTitle(),
		},
		{
			name: "null section keeps the defaults",
			src:  "title: null\n",
			want: defaultTitle(),
		},
		{
			name: "every key",
			src: "models:\n  - {name: small, use: u, model: m}\ntitle:\n  enabled: false\n  max_words: 3\n  max_chars: 20\n" +
				"  model_name: small\n  prompt_template: \"Title {{in braces}}: {user_msg}\"\n",
			want: Title{MaxWords: 3, MaxChars: 20, ModelName: "small", PromptTemplate: "Title {{in braces}}: {user_msg}"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src, nil)
			if diff := cmp.Diff(tt.want, c.Title); diff != "" {
				t.Errorf("Title (-want +got):\n%s", diff)
			}
			if len(c.Ignored) != 0 {
				t.Errorf("Ignored = %v, want none", c.Ignored)
			}
		})
	}
}

func TestTitleSectionErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{
			name: "unknown key",
			src:  "title:\n  enabled: true\n  max_word: 6\n",
			want: `config.yaml:3: title.max_word: unknown key "max_word"`,
		},
		{
			name: "max_words below range",
			src:  "title:\n  max_words: 0\n",
			want: "config.yaml:2: title.max_words: must be between 1 and 20, got 0",
		},
		{
			name: "max_words above range",
			src:  "title:\n  max_words: 21\n",
			want: "config.yaml:2: title.max_words: must be between 1 and 20, got 21",
		},
		{
			name: "max_chars below range",
			src:  "title:\n  enabled: true\n  max_chars: 9\n",
			want: "config.yaml:3: title.max_chars: must be between 10 and 200, got 9",
		},
		{
			name: "max_chars above range",
			src:  "title:\n  max_chars: 201\n",
			want: "config.yaml:2: title.max_chars: must be between 10 and 200, got 201",
		},
		{
			name: "unknown placeholder",
			src:  "title:\n  prompt_template: \"Name it: {user_message}\"\n",
			want: "config.yaml:2: title.prompt_template: unknown placeholder {user_message} (known: {max_words}, {user_msg}, {assistant_msg})",
		},
		{
			name: "single brace",
			src:  "title:\n  prompt_template: \"Name it } {user_msg}\"\n",
			want: "config.yaml:2: title.prompt_template: single '}' at offset 8",
		},
		{
			name: "empty template",
			src:  "title:\n  prompt_template: \"\"\n",
			want: "config.yaml:2: title.prompt_template: must not be empty",
		},
		{
			name: "unknown model",
			src:  "models:\n  - {name: big, use: u, model: m}\ntitle:\n  model_name: small\n",
			want: `config.yaml:4: title.model_name: no model named "small" in models (configured: big)`,
		},
		{
			name: "wrong type",
			src:  "title:\n  max_chars: lots\n",
			want: `config.yaml:2: title.max_chars: expected integer, got string "lots"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tt.src), nil)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestTitlePrompt(t *testing.T) {
	tests := []struct {
		name     string
		template string
		want     string
		wantErr  string
	}{
		{name: "DeerFlow default", template: DefaultTitlePrompt,
			want: "Generate a concise title (max 6 words) for this conversation.\nUser: Hi {there}\nAssistant: Hello\n\nReturn ONLY the title, no quotes, no explanation."},
		{name: "escaped braces", template: "{{user_msg}} = {user_msg}}}", want: "{user_msg} = Hi {there}}"},
		{name: "values are not re-read as placeholders", template: "{user_msg}{assistant_msg}", want: "Hi {there}Hello"},
		{name: "positional placeholder", template: "{0}", wantErr: "unknown placeholder {0}"},
		{name: "format spec", template: "{max_words:d}", wantErr: "unknown placeholder {max_words:d}"},
		{name: "unclosed brace", template: "title {user_msg", wantErr: "single '{' at offset 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TitlePrompt(tt.template, 6, "Hi {there}", "Hello")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("TitlePrompt = %q, want %q", got, tt.want)
			}
		})
	}
}
