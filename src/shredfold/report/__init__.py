"""The HTML report (``results/report.html``): :mod:`.build` gathers and renders, :mod:`.charts`
draws (matplotlib SVG), :mod:`.highlight` marks omissions and hallucinations, :mod:`.paper`
holds the numbers the paper reports."""
