package config_test

import (
	"fmt"

	"github.com/antlerhq/antler/config"
)

func ExampleParse() {
	src := []byte(`
models:
  - name: gpt-4o
    use: langchain_openai:ChatOpenAI
    model: gpt-4o
    api_key: $OPENAI_API_KEY
    temperature: 0.2
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
run_events:
  backend: db
`)
	env := func(name string) (string, bool) {
		if name == "OPENAI_API_KEY" {
			return "sk-test", true
		}
		return "", false
	}
	cfg, err := config.Parse("config.yaml", src, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := cfg.DefaultModel()
	fmt.Println(m.Name, m.Options["api_key"], m.Options["temperature"])
	fmt.Println("host bash:", cfg.IsHostBashAllowed())
	fmt.Println("ignored:", cfg.Ignored)

	_, err = config.Parse("config.yaml", src, func(string) (string, bool) { return "", false })
	fmt.Println(err)
	// Output:
	// gpt-4o sk-test 0.2
	// host bash: false
	// ignored: [run_events]
	// config.yaml:6: models[0].api_key: environment variable OPENAI_API_KEY is not set
}
