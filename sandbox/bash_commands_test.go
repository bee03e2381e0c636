package sandbox

import "testing"

// TestLocalBash_quotingAndNestingCannotHideARefusedCommand: the host-bash
// checks read the parsed commands, so a shell string, eval, a wrapper,
// backticks or quotes refuse what the plain command refuses (each of
// these passed the token walk alone).
func TestLocalBash_quotingAndNestingCannotHideARefusedCommand(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true})
	for _, tc := range []struct {
		name, cmd, wantErr string
	}{
		{"cd in bash -c", "bash -c 'cd /; ls'", "Unsafe working directory change in command: cd /. Use paths under /mnt/user-data"},
		{"cd in eval", "eval cd /", "Unsafe working directory change in command: cd /. Use paths under /mnt/user-data"},
		{"cd in backticks", "x=`cd /`; ls", "Unsafe working directory change in command substitution. Use paths under /mnt/user-data"},
		{"cd to a substitution", `cd "$(printf /)"`, `Unsafe working directory change in command: cd "$(printf /)". Use paths under /mnt/user-data`},
		{"root through sudo", "sudo ls /", "Unsafe absolute paths in command: /. Use paths under /mnt/user-data"},
		{"root through xargs", "echo | xargs ls /", "Unsafe absolute paths in command: /. Use paths under /mnt/user-data"},
		{"quoted slash starts a host path", `cat "/"etc/passwd`, "Unsafe absolute paths in command: /etc/passwd. Use paths under /mnt/user-data"},
		{"traversal in bash -c", "bash -c 'cat ../secret'", "Access denied: path traversal detected"},
		{"traversal in sh -c in eval", `eval "sh -c 'cat ../secret'"`, "Access denied: path traversal detected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateCommand(f.layout, tc.cmd, nil)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	for _, cmd := range []string{"bash -c 'echo hi; ls'", "eval echo ok", "x=`pwd`; echo $x", `cat "/mnt/user-data/workspace/a.txt"`, "sudo ls sub"} {
		if err := validateCommand(f.layout, cmd, nil); err != nil {
			t.Errorf("%q refused: %v", cmd, err)
		}
	}
}

// TestLocalBash_unparsableLineKeepsTheTokenChecks: a line the shell parser
// cannot read is still checked by the token walk.
func TestLocalBash_unparsableLineKeepsTheTokenChecks(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true})
	for cmd, want := range map[string]string{
		"cd / ; echo 'unterminated": "Unsafe working directory change in command: cd /. Use paths under /mnt/user-data",
		"ls / ; echo 'unterminated": "Unsafe absolute paths in command: /. Use paths under /mnt/user-data",
	} {
		if err := validateCommand(f.layout, cmd, nil); err == nil || err.Error() != want {
			t.Errorf("%q: err = %v, want %q", cmd, err, want)
		}
	}
}
