"""The hardware boundary: cameras, the simulated tray, the GPIO panel, the Pi install.

The only package that imports picamera2, gpiozero or cv2.VideoCapture. It imports
none of the other packages of this project.
"""
