package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// makeRunLine is the serve command `make run` runs under env (make -n:
// printed, not run), as its NAME=VALUE assignments.
func makeRunLine(t *testing.T, env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("make", "-s", "-n", "run")
	cmd.Dir = "../.."
	// A clean environment but for PATH: the variables under test come from env.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n run: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "creativeapi serve") {
			continue
		}
		vars := map[string]string{}
		for _, f := range strings.Fields(line) {
			if name, value, ok := strings.Cut(f, "="); ok && name == strings.ToUpper(name) && !strings.HasPrefix(name, "-") {
				vars[name] = value
			}
		}
		return vars
	}
	t.Fatalf("make -n run runs no serve:\n%s", out)
	return nil
}

// TestMakeRunDefaultsYieldToTheEnvironment: every variable make run sets
// for the server takes the environment's value when there is one (an
// empty one included: METRICS_ADDR= turns metrics off).
func TestMakeRunDefaultsYieldToTheEnvironment(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	defaults := makeRunLine(t)
	if defaults["METRICS_ADDR"] == "" || defaults["DEV_MODE"] != "true" {
		t.Fatalf("make run sets %v; want its development defaults", defaults)
	}
	for name := range defaults {
		for _, value := range []string{"127.0.0.1:13999", ""} {
			got := makeRunLine(t, name+"="+value)
			if v, ok := got[name]; ok && v != value {
				t.Errorf("with %s=%q in the environment, make run sets %s=%q", name, value, name, v)
			}
		}
	}
}
