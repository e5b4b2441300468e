package testenv

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"creativeapi/internal/chainwatch"
	"creativeapi/internal/devchain"
	"creativeapi/internal/trongrid"
)

// ChainBlockInterval is how often the chain of StartChain mines a block;
// with its solidified head ChainSolidLag blocks behind and
// DEPOSIT_CONFIRMATIONS=3, a paid deposit is credited within a second.
const (
	ChainBlockInterval = 50 * time.Millisecond
	ChainSolidLag      = 3
)

// StartChain runs a chain simulator for the server e (a block every
// ChainBlockInterval) and the chain watcher on e's database, until the test
// ends, and returns the simulator's URL (pay with POST {url}/transfers).
func StartChain(t testing.TB, e *Env) string {
	t.Helper()
	chain := devchain.New(devchain.Options{Contract: e.Config.TronUSDTContract, SolidLag: ChainSolidLag})
	srv := httptest.NewServer(chain.Handler())
	stopMining := make(chan struct{})
	go chain.Run(ChainBlockInterval, stopMining)
	api, err := trongrid.New(srv.URL, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w := chainwatch.New(chainwatch.Config{
		Treasury: e.Config.TreasuryAddress, Contract: e.Config.TronUSDTContract,
		PollInterval: ChainBlockInterval, MonitoringWindow: e.Config.DepositMonitoringWindow,
		Tolerance: &e.Config.DepositShortfallTolerance,
	}, e.DB.Store, api, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		close(stopMining)
		srv.Close()
	})
	return srv.URL
}
