package deposit_test

import (
	"testing"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
)

// TestDecision_OneWordInRequestRecordAndCLI: the settlement request, the
// audit record the API shows and the ledger's decisions (the CLI's flags
// and the audit table's words) are the same three words, and each names
// exactly one operator move.
func TestDecision_OneWordInRequestRecordAndCLI(t *testing.T) {
	words := []struct {
		request api.SettleTransferRequestDecision
		record  api.TransferSettlementDecision
		ledger  deposit.Decision
		move    deposit.Move
	}{
		{api.Credit, api.SettlementCredit, deposit.DecisionCredit, deposit.MoveSettleCredit},
		{api.Refund, api.SettlementRefund, deposit.DecisionRefund, deposit.MoveSettleRefund},
		{api.Reject, api.SettlementReject, deposit.DecisionReject, deposit.MoveSettleReject},
	}
	for _, w := range words {
		if string(w.request) != string(w.record) || string(w.record) != string(w.ledger) {
			t.Errorf("request %q, record %q, ledger %q: want one word", w.request, w.record, w.ledger)
		}
		if deposit.Settlements[w.ledger] != w.move || deposit.DecisionOf(w.move) != w.ledger {
			t.Errorf("%q does not name move %s alone", w.ledger, w.move)
		}
	}
	operatorMoves := 0
	for _, r := range deposit.TransferMoves {
		if r.By == deposit.ByOperator {
			operatorMoves++
		}
	}
	if len(deposit.Settlements) != len(words) || operatorMoves != len(words) {
		t.Errorf("%d decisions, %d operator moves; want %d of each", len(deposit.Settlements), operatorMoves, len(words))
	}
}
