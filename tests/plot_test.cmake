# bench/plot_performance.py turns layout_bench JSON into an SVG with one bar per measured ratio.
# Run: cmake -DPYTHON=... -DSCRIPT=... -DJSON=... -DOUT=... -P plot_test.cmake
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" "${JSON}" "${OUT}" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "plot_performance.py failed: ${status}")
endif()
# The SVG must parse as XML, and hold one bar per (dtype, shape, series) the JSON measured.
execute_process(
  COMMAND "${PYTHON}" -c "
import json, sys, xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
bars = [r for r in svg.iter('{http://www.w3.org/2000/svg}rect') if r.find('{http://www.w3.org/2000/svg}title') is not None]
runs = {b['run_name'] for b in json.load(open(sys.argv[2]))['benchmarks']}
expected = 0
for name in runs:
    kernel, _, rest = name.partition('/')
    if kernel in ('apply', 'apply_out_of_place'):
        layout, dtype, shape = rest.split('/', 2)
        limit = 'limit_in_place' if kernel == 'apply' else 'limit_copy'
        expected += f'{limit}/{dtype}/{shape}' in runs
print(len(bars), expected)
sys.exit(0 if len(bars) == expected and expected > 0 else 1)
" "${OUT}" "${JSON}"
  RESULT_VARIABLE status OUTPUT_VARIABLE counts)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the SVG's bars (first number) do not match the JSON's ratios: ${counts}")
endif()
