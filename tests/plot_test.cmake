# bench/plot_performance.py turns layout_bench JSON into an SVG with one bar per measured ratio.
# Run: cmake -DPYTHON=... -DSCRIPT=... -DJSON=... -DOUT=... -P plot_test.cmake
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" "${JSON}" "${OUT}" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "plot_performance.py failed: ${status}")
endif()
# The SVG must parse as XML, hold one bar per (dtype, shape, series) the JSON measured, and carry
# its axis labels, the legend of the shape code and the CPU of the context.
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
texts = [''.join(t.itertext()) for t in svg.iter('{http://www.w3.org/2000/svg}text')]
context = json.load(open(sys.argv[2]))['context']
labelled = (any(t == 'time / limit time' for t in texts) and any('d(head size)' in t for t in texts)
            and any('head size 128' in t for t in texts)
            and any(context.get('cpu_model', 'CPU not recorded') in t for t in texts))
print(len(bars), expected, 'axis labels, shape legend and CPU' if labelled else 'labels missing')
sys.exit(0 if len(bars) == expected and expected > 0 and labelled else 1)
" "${OUT}" "${JSON}"
  RESULT_VARIABLE status OUTPUT_VARIABLE counts)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the SVG's bars (first number) do not match the JSON's ratios: ${counts}")
endif()
