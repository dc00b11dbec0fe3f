"""Pure image processing on numpy frames: tray geometry, colours, cubes, settling.

No I/O and no hardware; imports none of the other packages of this project.
"""
