package config

import (
	"cmp"
	"os"
	"path/filepath"
)

// Paths are the resolved locations of Antler's files, all absolute.
type Paths struct {
	Config     string // config.yaml (may not exist)
	Extensions string // extensions_config.json, "" for none
	Home       string // data directory
}

// ResolvePaths applies the lookup order of the CLI contract (README.md, "Global flags"):
//
//   - config: flag, $ANTLER_CONFIG, $DEER_FLOW_CONFIG_PATH, ./config.yaml;
//   - extensions: flag, $ANTLER_EXTENSIONS_CONFIG,
//     $DEER_FLOW_EXTENSIONS_CONFIG_PATH, extensions_config.json beside the
//     config file if it exists, else none;
//   - home: flag, $ANTLER_HOME, ./.antler.
//
// getenv is usually os.Getenv; nil means no variables. Explicitly named
// files are not checked for existence here; loading them reports that.
func ResolvePaths(flagConfig, flagExtensions, flagHome string, getenv func(string) string) (Paths, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var p Paths
	var err error
	cfg := cmp.Or(flagConfig, getenv("ANTLER_CONFIG"), getenv("DEER_FLOW_CONFIG_PATH"), "config.yaml")
	if p.Config, err = filepath.Abs(cfg); err != nil {
		return Paths{}, err
	}
	ext := cmp.Or(flagExtensions, getenv("ANTLER_EXTENSIONS_CONFIG"), getenv("DEER_FLOW_EXTENSIONS_CONFIG_PATH"))
	if ext != "" {
		if p.Extensions, err = filepath.Abs(ext); err != nil {
			return Paths{}, err
		}
	} else {
		beside := filepath.Join(filepath.Dir(p.Config), "extensions_config.json")
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
			p.Extensions = beside
		}
	}
	home := cmp.Or(flagHome, getenv("ANTLER_HOME"), ".antler")
	if p.Home, err = filepath.Abs(home); err != nil {
		return Paths{}, err
	}
	return p, nil
}
