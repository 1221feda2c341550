; 'in' takes a package and a truck; here the arguments are swapped.
(define (problem delivery-bad)
  (:domain delivery)
  (:objects t1 - truck p1 - package a b - place)
  (:init (at t1 depot) (at p1 a) (road depot a) (road a b))
  (:goal (and (at p1 b)
              (in t1 p1))))
