package debugpage

import (
	_ "embed"
	"html/template"
)

//go:embed page.html
var pageHTML string

// page renders a view. html/template escapes every value from the snapshot.
// n groups a count's digits (12 345).
var page = template.Must(template.New("page").Funcs(template.FuncMap{"n": grouped}).Parse(pageHTML))
