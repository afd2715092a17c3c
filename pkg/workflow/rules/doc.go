// Package rules decides when the object of a Resource WorkflowTemplate has
// succeeded or failed: it parses and evaluates the fieldSelector and
// conditionSelector of batchv1beta1.Rules against the object's unstructured
// content, validates them for the admission webhook, and gives the rules
// that are filled in for the T9k Jobs.
//
// # fieldSelector
//
// A fieldSelector is a comma-separated list of requirements, all of which
// must hold (comma means AND):
//
//	<path> <op> <value>
//	<path> in (<value>, <value>, ...)
//	<path> notin (<value>, <value>, ...)
//
// with the operators ==, = (the same as ==), !=, >, <, in and notin. Spaces
// around the operators, the commas and the parentheses are optional, except
// that in and notin must be separated from the path by a space:
//
//	status.succeeded>0
//	status.succeeded > 0,status.failed == 0
//	status.phase in (Succeeded, Failed),status.workflowTemplateSpec.type == DAG
//	metadata.name=my-service
//
// A path is the dot-separated names of the fields from the top of the
// object, each of letters, digits, '_', '-' and '/'; a segment of digits
// indexes a list (status.conditions.0.type). A value is one word: it holds
// no space and none of the characters , ( ) = ! < >; quoting is not
// supported. In a list of values, an empty value stands for "".
//
// Comparisons:
//
//   - ==, !=, in and notin compare the field's value as a string: a string
//     as it is, a number or bool as JSON writes it (1, 2.5, true), a list or
//     object as its compact JSON. A field that is missing or null is "", so
//     that, as with Kubernetes label selectors, != and notin match an object
//     without the field and "status.phase ==" (an empty value) matches one
//     without a phase.
//   - > and < compare numbers; their value must be a number. The field must
//     be a JSON number or a string holding one (a quantity such as "1Gi" is
//     not); a field that is missing or not numeric matches neither. Two
//     integers are compared exactly, other numbers as float64.
//
// # conditionSelector
//
// A conditionSelector {type, status} matches when status.conditions holds
// an entry with that type and status, both compared exactly.
//
// # Rules
//
// Both selectors of a Rules, where set, must hold; a nil Rules or one with
// neither selector never matches, so a Resource run without rules waits
// until it times out (a long-running service stays Running).
package rules
