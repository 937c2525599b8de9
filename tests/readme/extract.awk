# extract.awk - README.md's code, written out as C++ for check-readme (tests/readme/rules.mk).
#   awk -v out=build/readme -f tests/readme/extract.awk README.md
# What is code (tests/README.md, "README code is compiled from README.md"):
#   - every ```cpp block: the one with `int main` is the complete program (out/program.cpp),
#     each other one a snippet;
#   - every span written in double backticks, ``like this`` (it renders as `like this`): the
#     marked spans of one table cell, or of one paragraph line, are one snippet. A span that
#     ends in ; or } is statements; any other is an expression, kept as `auto valueN =
#     heed::readme::value_of([&] { return (...); });` (N counts the snippet's expressions from
#     1) so that a check can read it;
#   - a table column headed `one line` must have a marked span in every row.
# Each snippet goes to out/snippets/KEY.inc, with #line directives so that a compiler error
# names README.md and its line, and out/examples.cpp runs each as a doctest case in the
# fixture of its `##` section (heed::readme::SECTION, tests/readme/names.h). KEY is the
# slug of the row's first cell (a table) or of the section (a block or a paragraph), with
# _2, _3, ... when it is taken; tests/readme/checks.cpp includes snippets by KEY.

function slug(s,    t) {
  t = tolower(s)
  gsub(/[^a-z0-9]+/, "_", t)
  gsub(/^_+|_+$/, "", t)
  if (length(t) > 40) { t = substr(t, 1, 40); sub(/_+$/, "", t) }
  return t == "" ? "snippet" : t
}

function unique_key(base,    k, n) {
  k = base; n = 1
  while (k in used) k = base "_" (++n)
  used[k] = 1
  return k
}

function cstring(s) {
  gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s)
  return s
}

function plain(s) {
  gsub(/`|\*\*/, "", s)
  gsub(/^[ \t]+|[ \t]+$/, "", s)
  if (length(s) > 60) s = substr(s, 1, 57) "..."
  return s
}

function fail(line, msg) {
  printf "check-readme: README.md:%d: %s\n", line, msg > "/dev/stderr"
  errors++
}

# Begins a snippet: its file, and its doctest case in examples.cpp.
function open_snippet(key, line, label) {
  file = out "/snippets/" key ".inc"
  printf "TEST_CASE_FIXTURE(heed::readme::%s, \"README.md:%d: %s\") {\n#include \"snippets/%s.inc\"\n}\n\n", \
    section, line, cstring(label), key > cases
  snippets++
}

# The marked spans of text (a cell or a paragraph line) as one snippet; returns how many.
function emit_spans(text, line, key, label,    n, start, stop, code, values) {
  n = 0; values = 0
  while ((start = index(text, "``")) > 0) {
    text = substr(text, start + 2)
    stop = index(text, "``")
    if (stop == 0) { fail(line, "a `` span that does not close"); break }
    code = substr(text, 1, stop - 1)
    text = substr(text, stop + 2)
    gsub(/^[ \t]+|[ \t]+$/, "", code)
    gsub(/\\\|/, "|", code)  # a table cell writes | as \|
    if (n++ == 0) open_snippet(unique_key(key), line, label)
    printf "#line %d \"README.md\"\n", line > file
    if (code ~ /[;}]$/) print code > file
    else {
      values++
      printf "auto value%d = heed::readme::value_of([&] { return (%s); }); (void)value%d;\n", values, code, values > file
    }
  }
  if (n > 0) close(file)
  return n
}

BEGIN {
  if (out == "") { print "extract.awk: set -v out=DIR" > "/dev/stderr"; exit 2 }
  cases = out "/examples.cpp"
  print "// examples.cpp - generated from README.md by tests/readme/extract.awk: do not edit." > cases
  print "// Each case runs one snippet of README.md (tests/README.md says which text is code)." > cases
  print "#include \"names.h\"\nusing namespace heed::readme;\n" > cases
  section = "top"
}

# ---- fenced blocks ----
fence && /^```/ {
  fence = 0
  if (lang != "cpp") next
  if (block ~ /int main *\(/) {
    if (programs++) { fail(block_line, "a second complete program (a cpp block with main); check-readme runs one"); next }
    printf "#line %d \"README.md\"\n%s", block_line + 1, block > (out "/program.cpp")
    close(out "/program.cpp")
  } else {
    open_snippet(unique_key(section), block_line, heading " (the cpp block)")
    printf "#line %d \"README.md\"\n%s", block_line + 1, block > file
    close(file)
  }
  next
}
fence { block = block $0 "\n"; next }
/^```/ { fence = 1; lang = substr($0, 4); block = ""; block_line = NR; next }

# ---- headings: a `##` heading names the fixture of the code below it ----
/^#+ / {
  heading = $0; sub(/^#+ +/, "", heading)
  if ($0 ~ /^## /) section = slug(heading)
  intable = 0
  next
}

# ---- tables: one snippet per cell with marked spans ----
/^\|/ {
  row = $0
  gsub(/\\\|/, "\001", row)  # an escaped pipe is not a cell border
  ncells = split(row, cell, "|")
  for (i = 1; i <= ncells; i++) gsub(/\001/, "\\|", cell[i])
  if (!intable) {  # the header row: which column is `one line`
    intable = 1; header_line = NR; one_line = 0
    for (i = 2; i < ncells; i++) { h = cell[i]; gsub(/^[ \t]+|[ \t]+$/, "", h); if (h == "one line") one_line = i }
    next
  }
  if ($0 ~ /^\|[-| :]*$/) next  # the separator row
  key = slug(plain(cell[2]))
  for (i = 2; i < ncells; i++) {
    n = emit_spans(cell[i], NR, key, plain(cell[2]))
    if (i == one_line && n == 0)
      fail(NR, "a row of a `one line` table without its code in double backticks (``...``)")
  }
  next
}
{ intable = 0 }

# ---- a paragraph line with marked spans ----
/``/ { emit_spans($0, NR, section, heading) }

END {
  close(cases)
  if (!programs) fail(NR, "no complete program (a cpp block with int main)")
  printf "check-readme: %d snippets and %d program from README.md\n", snippets, programs
  exit errors ? 1 : 0
}
