package deposit

// CreditByPolicy exposes creditByPolicy to the machine test, which runs
// each move from every state.
var CreditByPolicy = creditByPolicy
