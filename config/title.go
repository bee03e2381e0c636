package config

import (
	"strconv"
	"strings"
)

// DefaultTitlePrompt is DeerFlow's title prompt template. Its placeholders
// are {max_words}, {user_msg} and {assistant_msg}.
const DefaultTitlePrompt = "Generate a concise title (max {max_words} words) for this conversation.\n" +
	"User: {user_msg}\nAssistant: {assistant_msg}\n\nReturn ONLY the title, no quotes, no explanation."

// Title is the title section: automatic thread titles (DeerFlow's
// TitleMiddleware). After the first model answer of a thread that has no
// title, the title is set from the model named ModelName or, without one,
// from the user's first message.
type Title struct {
	// Enabled turns automatic titles on (default true).
	Enabled bool `yaml:"enabled"`
	// MaxWords is the word limit the prompt asks for (default 6, 1 to 20).
	MaxWords int `yaml:"max_words"`
	// MaxChars caps the title in characters (default 60, 10 to 200).
	MaxChars int `yaml:"max_chars"`
	// ModelName names the models[] entry that writes titles; null (the
	// default) makes no model call and uses the user's first message,
	// shortened, as DeerFlow does.
	ModelName string `yaml:"model_name"`
	// PromptTemplate is the title prompt, in Python str.format syntax with
	// the placeholders {max_words}, {user_msg} and {assistant_msg} ({{ and
	// }} are literal braces). Default: DeerFlow's prompt.
	PromptTemplate string `yaml:"prompt_template"`
}

func defaultTitle() Title {
	return Title{Enabled: true, MaxWords: 6, MaxChars: 60, PromptTemplate: DefaultTitlePrompt}
}

// TitlePrompt renders the title prompt template as Python's str.format
// does for the three named placeholders. Any other placeholder, a format
// spec or conversion, or an unmatched brace is an error.
func TitlePrompt(template string, maxWords int, userMsg, assistantMsg string) (string, error) {
	return pyFormat(template, []string{"max_words", "user_msg", "assistant_msg"}, map[string]string{
		"max_words": strconv.Itoa(maxWords), "user_msg": userMsg, "assistant_msg": assistantMsg})
}

func (p *parser) validateTitle() {
	t := p.cfg.Title
	if v := t.MaxWords; v < 1 || v > 20 {
		p.invalid("title.max_words", "must be between 1 and 20, got %d", v)
	}
	if v := t.MaxChars; v < 10 || v > 200 {
		p.invalid("title.max_chars", "must be between 10 and 200, got %d", v)
	}
	if t.PromptTemplate == "" {
		p.invalid("title.prompt_template", "must not be empty")
	} else if _, err := TitlePrompt(t.PromptTemplate, 1, "", ""); err != nil {
		p.invalid("title.prompt_template", "%v", err)
	}
	p.checkModelName("title.model_name", t.ModelName)
}

// checkModelName reports a model_name at key that names no models[]
// entry ("" names none and is fine), listing the configured names.
func (p *parser) checkModelName(key, name string) {
	if name == "" {
		return
	}
	if _, ok := p.cfg.Model(name); ok {
		return
	}
	names := make([]string, len(p.cfg.Models))
	for i, m := range p.cfg.Models {
		names[i] = m.Name
	}
	p.invalid(key, "no model named %q in models (configured: %s)", name, strings.Join(names, ", "))
}
