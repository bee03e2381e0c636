package toolset

import (
	"errors"
	"maps"
	"slices"

	"github.com/antlerhq/antler/config"
)

// checkOptionKeys returns a *config.Error for each key of a tools[]
// entry's options that is not one of known, naming the nearest known
// key; BuildTool places them at their lines.
func checkOptionKeys(opts map[string]any, known ...string) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if !slices.Contains(known, k) {
			errs = append(errs, &config.Error{Key: k, Msg: config.UnknownKeyMsg(k, known)})
		}
	}
	return errors.Join(errs...)
}
