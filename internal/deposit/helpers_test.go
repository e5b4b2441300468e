package deposit_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// settings are the default deposit settings (docs/configuration.md) on
// the development treasury.
func settings() deposit.Settings {
	return deposit.Settings{
		Address: tron.DevTreasuryAddress, Confirmations: 19,
		TTL: 30 * time.Minute, MonitoringWindow: 24 * time.Hour, MaxOpenPerUser: 5,
	}
}

// create opens a deposit of base for user in its own transaction.
func create(t *testing.T, d *testenv.DB, s deposit.Settings, user uuid.UUID, base int64) (db.Deposit, error) {
	t.Helper()
	var dep db.Deposit
	err := d.Store.InTx(context.Background(), func(q store.Tx) error {
		var err error
		dep, err = deposit.Create(context.Background(), q, s, user, base)
		return err
	})
	return dep, err
}

// mustCreate is create that fails the test on error.
func mustCreate(t *testing.T, d *testenv.DB, user uuid.UUID, base int64) db.Deposit {
	t.Helper()
	dep, err := create(t, d, settings(), user, base)
	if err != nil {
		t.Fatalf("create deposit: %v", err)
	}
	return dep
}

// exec runs one statement of test set-up.
func exec(t *testing.T, d *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := d.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// row reads the deposit's stored state.
type row struct {
	Status         deposit.Status
	Reserved       bool
	TxID           *string
	CreditedAmount int64
}

func read(t *testing.T, d *testenv.DB, id uuid.UUID) row {
	t.Helper()
	var r row
	err := d.Pool.QueryRow(context.Background(),
		"SELECT status, reserved, transfer_tx_id, credited_amount_minor FROM deposits WHERE id = $1", id).
		Scan(&r.Status, &r.Reserved, &r.TxID, &r.CreditedAmount)
	if err != nil {
		t.Fatalf("read deposit: %v", err)
	}
	return r
}

// count runs a count(*) query.
func count(t *testing.T, d *testenv.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := d.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// fillSuffixes reserves base+s for every s in 1..9999 except the given
// ones, as deposits of a new user, straight in SQL.
func fillSuffixes(t *testing.T, d *testenv.DB, base int64, reserved bool, except ...int) {
	t.Helper()
	other, _ := d.User(t, "Filler")
	if except == nil {
		except = []int{}
	}
	exec(t, d, `INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
			requested_amount_minor, confirmations_required, expires_at, reserved_until, reserved, status)
		SELECT $1, 'TRC20', $2, 'USDT', $3::bigint, s, $3::bigint + s, 19, now() + interval '30 minutes', now() + interval '1 day', $4,
		       CASE WHEN $4 THEN 'awaiting_transfer' ELSE 'expired' END
		FROM generate_series(1, 9999) AS s
		WHERE s <> ALL ($5::int[])`, other, tron.DevTreasuryAddress, base, reserved, except)
}
