package chainwatch

import (
	"creativeapi/internal/money"
	"creativeapi/internal/trongrid"
)

// The reasons a transfer to the treasury is recorded as unmatched before
// any deposit is looked at (deposit.Match gives the others).
const (
	ReasonNotATransfer = "not_a_transfer"
	ReasonWrongToken   = "wrong_token"
	ReasonInvalidValue = "invalid_value"
)

// judgement is what a listed transfer is, before deposits are consulted.
type judgement struct {
	// forTreasury is false when the transfer is not to the treasury: the
	// API answered something we did not ask for; it is logged, not recorded.
	forTreasury bool
	// amount is the value in micro-USDT when the transfer can pay a
	// deposit; reason says why not otherwise.
	amount int64
	reason string
}

// judge applies the rule of a countable transfer (docs/deposits.md): a
// TRC20 Transfer of the configured USDT contract to the treasury whose
// value is a positive whole number of micro-USDT. The receipt is checked
// separately, by the node's answer for the transaction.
func judge(t trongrid.Transfer, treasury, contract string) judgement {
	if t.To != treasury {
		return judgement{}
	}
	j := judgement{forTreasury: true}
	switch {
	case t.Type != "Transfer":
		j.reason = ReasonNotATransfer
	case t.Token != contract || (t.Decimals >= 0 && t.Decimals != money.USDT.Scale):
		j.reason = ReasonWrongToken
	default:
		if v, err := money.ParseMinor(t.Value); err == nil && v > 0 {
			j.amount = v
		} else {
			j.reason = ReasonInvalidValue
		}
	}
	return j
}
