package pgserver

import (
	"context"
	"os/exec"
)

// IsOurs runs the readiness check of a cluster started as cmd for dataDir
// on port with password against whatever answers there.
func IsOurs(ctx context.Context, dataDir string, port int, password string, cmd *exec.Cmd) error {
	return (&Server{DataDir: dataDir, Port: port, password: password, pid: cmd.Process.Pid}).isOurs(ctx)
}

// PID is the postmaster's pid.
func (s *Server) PID() int { return s.pid }
