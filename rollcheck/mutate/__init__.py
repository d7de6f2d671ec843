"""The mutation campaign (``rollcheck mutate``): how many small mechanical bugs in the reference implementations
the checkers kill.

The broken variants (``rollcheck mutants``) are bugs someone chose; these are mechanical ones. Each mutant is one
edit to a module of a protocol's reference (:mod:`.sites`, :mod:`.generate`); for each, the checkout's packages
are copied once (:mod:`.tree`), the mutated module is written into a copy of that snapshot, and the gate's checks
run from the copy (:mod:`.steps`, :mod:`.runner`), cheapest first, the first kill ending the mutant
(:mod:`.mutant_run`), against a baseline of the same checks on the unmutated copy (:mod:`.baseline`). A survivor
the protocol's reviewed list names is "equivalent" (:mod:`.equivalents`). :mod:`.campaign` runs the whole,
saving as it goes; :mod:`.resume` carries an earlier campaign's rows that stand (:mod:`.digests`,
:mod:`.registry_growth`); :mod:`.report` writes the summary and the JSON.
"""
