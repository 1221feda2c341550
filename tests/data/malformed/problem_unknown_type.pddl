; 'boat' is not a type of the delivery domain.
(define (problem delivery-bad)
  (:domain delivery)
  (:objects t1 - truck
            p1 - package
            s1 - boat
            a b - place)
  (:init (at t1 depot) (at p1 a) (road depot a) (road a b))
  (:goal (and (at p1 b))))
