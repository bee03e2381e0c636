package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/joho/godotenv"
)

// DotEnvFile is the name of the environment file read beside config.yaml.
const DotEnvFile = ".env"

// DotEnv is what [ApplyDotEnv] did with one .env file. It holds variable
// names only, never their values.
type DotEnv struct {
	Path string   // absolute path of the file, "" when there was none
	Set  []string // names the file supplied (they were not set), sorted
	Kept []string // names the file also sets that the environment already had, sorted
}

// ApplyDotEnv reads the .env file in dir, if there is one, and sets each
// of its variables that lookup does not find, through set: the existing
// environment wins, as with python-dotenv's load_dotenv (which DeerFlow
// calls on start). The file is parsed by github.com/joho/godotenv (KEY=VALUE
// lines, "export " prefixes, quotes, # comments, ${VAR} expansion). No file
// is not an error; a file that does not parse is an [*Error] naming it.
func ApplyDotEnv(dir string, lookup func(string) (string, bool), set func(key, value string) error) (DotEnv, error) {
	path, err := filepath.Abs(filepath.Join(dir, DotEnvFile))
	if err != nil {
		return DotEnv{}, &Error{File: DotEnvFile, Msg: err.Error(), Err: err}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return DotEnv{}, nil
	}
	if err != nil {
		return DotEnv{}, &Error{File: path, Msg: "cannot read: " + errMsg(err), Err: err}
	}
	vars, err := godotenv.Read(path)
	if err != nil {
		return DotEnv{}, &Error{File: path, Msg: "invalid .env file: " + errMsg(err), Err: err}
	}
	keys := slices.Sorted(maps.Keys(vars))
	for _, k := range keys {
		// godotenv accepts "=x" and "A B=x"; no environment variable has
		// such a name. Nothing is set from a file with one.
		if k == "" || strings.ContainsAny(k, " \t") {
			return DotEnv{}, &Error{File: path, Msg: fmt.Sprintf("invalid .env file: %q is not a variable name", k)}
		}
	}
	d := DotEnv{Path: path}
	for _, k := range keys {
		if _, ok := lookup(k); ok {
			d.Kept = append(d.Kept, k)
			continue
		}
		if err := set(k, vars[k]); err != nil {
			return d, &Error{File: path, Key: k, Msg: "cannot set: " + err.Error(), Err: err}
		}
		d.Set = append(d.Set, k)
	}
	return d, nil
}
